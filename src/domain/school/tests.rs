//! School unit tests: tools against the reference's behaviour, the generator's shape, the
//! policy rules, grounding proposals and the refinement hooks.
