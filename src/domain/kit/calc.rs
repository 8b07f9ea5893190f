//! The `calculate` tool every domain shares: a small, total evaluator for the expressions
//! the reference calculators accept (digits, `+ - * / ( ) .` and spaces, which also admits
//! Python's `**` and `//`). The result is rounded exactly as Python's `round(x, 2)` rounds
//! the same double (correctly rounded from its exact binary value, ties to even: `1/8` ->
//! 0.12, `2.675` -> 2.67) and printed as Python prints a float (`4.0`, `1e+16`).
//!
//! Architecture invariant: pure string -> string; never panics, bounded recursion.

use super::pyjson::py_float_repr;

/// Deepest nesting of parentheses / unary signs / powers we evaluate before refusing.
const MAX_DEPTH: usize = 200;

/// Evaluate `expression`; `Err` carries the message that follows `Error: `.
pub fn evaluate(expression: &str) -> Result<String, String> {
    if !expression.chars().all(|c| "0123456789+-*/(). ".contains(c)) {
        return Err("invalid characters in expression".into());
    }
    let tokens = tokenize(expression)?;
    let mut parser = Parser {
        tokens: &tokens,
        pos: 0,
        depth: 0,
    };
    let value = parser.expr()?;
    if parser.pos != tokens.len() {
        return Err("invalid syntax".into());
    }
    if !value.is_finite() {
        return Err("numerical result out of range".into());
    }
    Ok(py_float_repr(py_round(value, 2)))
}

/// Python's `round(x, ndigits)` for a finite double: the exact binary value rounded to
/// `ndigits` decimals, exact ties to even. Rust's fixed-precision formatting rounds the same
/// exact value the same way, and parsing the decimal back gives Python's nearest double.
pub fn py_round(x: f64, ndigits: usize) -> f64 {
    if !x.is_finite() {
        return x;
    }
    format!("{x:.ndigits$}").parse().unwrap_or(x)
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Token {
    Num(f64),
    Plus,
    Minus,
    Star,
    Slash,
    DoubleStar,
    DoubleSlash,
    Open,
    Close,
}

fn tokenize(s: &str) -> Result<Vec<Token>, String> {
    let chars: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        match c {
            ' ' => i += 1,
            '+' => {
                out.push(Token::Plus);
                i += 1;
            }
            '-' => {
                out.push(Token::Minus);
                i += 1;
            }
            '*' if chars.get(i + 1) == Some(&'*') => {
                out.push(Token::DoubleStar);
                i += 2;
            }
            '*' => {
                out.push(Token::Star);
                i += 1;
            }
            '/' if chars.get(i + 1) == Some(&'/') => {
                out.push(Token::DoubleSlash);
                i += 2;
            }
            '/' => {
                out.push(Token::Slash);
                i += 1;
            }
            '(' => {
                out.push(Token::Open);
                i += 1;
            }
            ')' => {
                out.push(Token::Close);
                i += 1;
            }
            _ => {
                let start = i;
                while chars
                    .get(i)
                    .map(|c| c.is_ascii_digit() || *c == '.')
                    .unwrap_or(false)
                {
                    i += 1;
                }
                let text: String = chars.get(start..i).unwrap_or(&[]).iter().collect();
                if text == "." || text.matches('.').count() > 1 {
                    return Err("invalid syntax".into());
                }
                let value = text
                    .parse::<f64>()
                    .map_err(|_| "invalid syntax".to_string())?;
                out.push(Token::Num(value));
            }
        }
    }
    Ok(out)
}

struct Parser<'a> {
    tokens: &'a [Token],
    pos: usize,
    depth: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<Token> {
        self.tokens.get(self.pos).copied()
    }

    fn enter(&mut self) -> Result<(), String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            Err("too many nested parentheses".into())
        } else {
            Ok(())
        }
    }

    fn expr(&mut self) -> Result<f64, String> {
        let mut acc = self.term()?;
        while let Some(op @ (Token::Plus | Token::Minus)) = self.peek() {
            self.pos += 1;
            let rhs = self.term()?;
            acc = if op == Token::Plus {
                acc + rhs
            } else {
                acc - rhs
            };
        }
        Ok(acc)
    }

    fn term(&mut self) -> Result<f64, String> {
        let mut acc = self.unary()?;
        while let Some(op @ (Token::Star | Token::Slash | Token::DoubleSlash)) = self.peek() {
            self.pos += 1;
            let rhs = self.unary()?;
            acc = match op {
                Token::Star => acc * rhs,
                _ if rhs == 0.0 => return Err("division by zero".into()),
                Token::Slash => acc / rhs,
                _ => (acc / rhs).floor(),
            };
        }
        Ok(acc)
    }

    fn unary(&mut self) -> Result<f64, String> {
        match self.peek() {
            Some(Token::Plus) => {
                self.pos += 1;
                self.enter()?;
                let v = self.unary();
                self.depth -= 1;
                v
            }
            Some(Token::Minus) => {
                self.pos += 1;
                self.enter()?;
                let v = self.unary().map(|v| -v);
                self.depth -= 1;
                v
            }
            _ => self.power(),
        }
    }

    fn power(&mut self) -> Result<f64, String> {
        let base = self.atom()?;
        if self.peek() == Some(Token::DoubleStar) {
            self.pos += 1;
            self.enter()?;
            let exponent = self.unary();
            self.depth -= 1;
            let exponent = exponent?;
            if base == 0.0 && exponent < 0.0 {
                return Err("0.0 cannot be raised to a negative power".into());
            }
            if base < 0.0 && exponent.fract() != 0.0 {
                return Err("complex result is not supported".into());
            }
            return Ok(base.powf(exponent));
        }
        Ok(base)
    }

    fn atom(&mut self) -> Result<f64, String> {
        match self.peek() {
            Some(Token::Num(v)) => {
                self.pos += 1;
                Ok(v)
            }
            Some(Token::Open) => {
                self.pos += 1;
                self.enter()?;
                let v = self.expr();
                self.depth -= 1;
                let v = v?;
                if self.peek() != Some(Token::Close) {
                    return Err("invalid syntax".into());
                }
                self.pos += 1;
                Ok(v)
            }
            _ => Err("invalid syntax".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{evaluate, py_round};

    #[test]
    fn evaluates_like_pythons_calculator() {
        assert_eq!(evaluate("2 + 2").unwrap(), "4.0");
        assert_eq!(evaluate("(10 - 4) / 4").unwrap(), "1.5");
        assert_eq!(evaluate("100 * 0.1 + 0.2").unwrap(), "10.2");
        assert_eq!(evaluate("1 / 3").unwrap(), "0.33");
        assert_eq!(evaluate("-3 + 5").unwrap(), "2.0");
        assert_eq!(evaluate("2 ** 3").unwrap(), "8.0");
        assert_eq!(evaluate("7 // 2").unwrap(), "3.0");
        assert_eq!(evaluate("1 / 0").unwrap_err(), "division by zero");
        assert_eq!(
            evaluate("2 + x").unwrap_err(),
            "invalid characters in expression"
        );
        assert_eq!(evaluate("2 +").unwrap_err(), "invalid syntax");
        assert_eq!(evaluate("").unwrap_err(), "invalid syntax");
        assert_eq!(evaluate("(1").unwrap_err(), "invalid syntax");
        assert!(evaluate(&"(".repeat(10_000)).is_err());
        assert!(evaluate(&"-".repeat(10_000)).is_err());
    }

    /// Values checked against CPython 3.11's `str(round(eval(e), 2))`.
    #[test]
    fn rounds_exactly_like_python() {
        assert_eq!(evaluate("1/8").unwrap(), "0.12");
        assert_eq!(evaluate("3/8").unwrap(), "0.38");
        assert_eq!(evaluate("2.675*1").unwrap(), "2.67");
        assert_eq!(evaluate("1.005").unwrap(), "1.0");
        assert_eq!(evaluate("0.125 + 0.25").unwrap(), "0.38");
        assert_eq!(evaluate("-0.001").unwrap(), "-0.0");
        assert_eq!(evaluate("10 ** 16").unwrap(), "1e+16");
        assert_eq!(evaluate("10 ** 15").unwrap(), "1000000000000000.0");
        assert_eq!(evaluate("123456.789").unwrap(), "123456.79");
        assert_eq!(py_round(0.5, 0), 0.0);
        assert_eq!(py_round(1.5, 0), 2.0);
    }
}
