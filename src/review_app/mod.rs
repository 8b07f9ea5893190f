//! `tracer review`: a local web app for the paper's last stage, manual review of the
//! evaluation candidates. One binary, assets embedded, no JavaScript toolchain: pages are
//! rendered on the server, a small script adds keyboard shortcuts and posts decisions.
//!
//! - `/`: the domains, with their candidates and review progress;
//! - `/d/<domain>`: the task list, filtered by split, verification, screening, emotion
//!   family, fault kind (from `tracer analyze`) and review state, and searched;
//! - `/d/<domain>/t/<task>`: one task: instruction, emotion condition and instruction,
//!   feeling, gold actions with their replayed outputs, `outputs`, the trace's path on the
//!   dependency graph, the verification verdict, every screening / eval / rollout episode
//!   as a conversation, and the decision panel (accept, reject with a reason, edit);
//! - `/d/<domain>/graph`: the dependency graph drawn as SVG, each edge with its executed
//!   witness;
//! - `POST /api/decide`: a decision as JSON. An edit is re-verified by replay first; a bad
//!   one is refused with the reason and nothing is written. Decisions are appended to
//!   `reviews/<domain>.jsonl` (see [`crate::review`]), which the `reviewed` stage applies.
//!
//! Safe by default: binds 127.0.0.1; any other address needs `--token`, which every
//! request must then carry (query, cookie or `X-Tracer-Token`); request size limits; a
//! request's path only selects among the domains and task ids in memory, never a file;
//! decisions must be JSON (a cross-site form cannot post one) and are written one line at
//! a time under a lock, so two tabs saving at once never interleave.
//!
//! Architecture invariant: reads artifacts through `artifact` and `stage::db`, decisions
//! through `review`; writes nothing but the decisions file.

pub mod data;
mod pages;

use crate::config::Paths;
use crate::http::{self, Request, Response, constant_time_eq};
use crate::review::{Decision, Edit, ReviewLine, Reviews};
use data::DomainData;
use serde_json::json;
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};

/// How `tracer review` was asked to run.
#[derive(Clone, Debug)]
pub struct Options {
    pub bind: IpAddr,
    pub port: u16,
    pub token: Option<String>,
    pub reviewer: String,
}

pub struct App {
    paths: Paths,
    domains: Vec<&'static dyn crate::domain::Domain>,
    data: Mutex<HashMap<&'static str, Arc<DomainData>>>,
    cfg: crate::review::ReviewedConfig,
    reviewer: String,
    token: Option<String>,
    save: Mutex<()>,
}

impl App {
    pub fn new(
        paths: Paths,
        domains: Vec<&'static dyn crate::domain::Domain>,
        opts: &Options,
    ) -> Result<App, String> {
        let (cfg_path, table) = paths.stage_table("reviewed").map_err(|e| e.to_string())?;
        let cfg =
            crate::review::ReviewedConfig::load(&cfg_path, &table).map_err(|e| e.to_string())?;
        // Every decisions file must read before the app starts: a broken one is fixed by hand.
        for d in &domains {
            Reviews::read(&crate::review::reviews_path(
                &paths.root,
                &cfg.reviews_dir,
                d.name(),
            ))?;
        }
        Ok(App {
            paths,
            domains,
            data: Mutex::new(HashMap::new()),
            cfg,
            reviewer: opts.reviewer.clone(),
            token: opts.token.clone(),
            save: Mutex::new(()),
        })
    }

    fn domain(&self, name: &str) -> Option<&'static dyn crate::domain::Domain> {
        self.domains.iter().copied().find(|d| d.name() == name)
    }

    /// A domain's data, read on first use and again after a run changed its artifacts.
    fn data(&self, domain: &'static dyn crate::domain::Domain) -> Result<Arc<DomainData>, String> {
        if let Some(d) = self.data.lock().unwrap().get(domain.name())
            && d.stamp == data::stamp(&self.paths, domain.name())
        {
            return Ok(Arc::clone(d));
        }
        let loaded = Arc::new(DomainData::load(&self.paths, domain)?);
        self.data
            .lock()
            .unwrap()
            .insert(domain.name(), Arc::clone(&loaded));
        Ok(loaded)
    }

    fn reviews_path(&self, domain: &str) -> std::path::PathBuf {
        crate::review::reviews_path(&self.paths.root, &self.cfg.reviews_dir, domain)
    }

    fn reviews(&self, domain: &str) -> Result<Reviews, String> {
        Reviews::read(&self.reviews_path(domain))
    }

    fn authorised(&self, req: &Request) -> bool {
        let Some(token) = &self.token else {
            return true;
        };
        [
            req.param("token"),
            req.cookie("tracer_token"),
            req.header("x-tracer-token"),
        ]
        .into_iter()
        .flatten()
        .any(|t| constant_time_eq(t.as_bytes(), token.as_bytes()))
    }

    /// Answer one request.
    pub fn handle(&self, req: &Request) -> Response {
        if !self.authorised(req) {
            return Response::text(
                403,
                "a token is required (start URL printed by tracer review)",
            );
        }
        let mut resp = self.route(req);
        if let (Some(t), Some(_)) = (&self.token, req.param("token")) {
            resp.headers.push((
                "Set-Cookie".into(),
                format!("tracer_token={t}; HttpOnly; SameSite=Strict; Path=/"),
            ));
        }
        resp
    }

    fn route(&self, req: &Request) -> Response {
        let segments: Vec<&str> = req.path.split('/').filter(|s| !s.is_empty()).collect();
        match (req.method.as_str(), segments.as_slice()) {
            ("GET", []) => Response::html(pages::index(self)),
            ("GET", ["static", "app.css"]) => Response::new(
                200,
                "text/css; charset=utf-8",
                include_str!("app.css").as_bytes().to_vec(),
            ),
            ("GET", ["static", "app.js"]) => Response::new(
                200,
                "text/javascript; charset=utf-8",
                include_str!("app.js").as_bytes().to_vec(),
            ),
            ("GET", ["d", domain]) => self.with_domain(domain, |d| {
                let reviews = self.reviews(domain)?;
                Ok(pages::task_list(self, &d, &reviews, req))
            }),
            ("GET", ["d", domain, "t", task]) => self.with_domain(domain, |d| {
                let reviews = self.reviews(domain)?;
                match d.get(task) {
                    Some(c) => Ok(pages::task_page(self, &d, c, &reviews, req)),
                    None => Err(format!("no task '{task}' in {domain}")),
                }
            }),
            ("GET", ["d", domain, "graph"]) => {
                self.with_domain(domain, |d| Ok(pages::graph_page(&d, req)))
            }
            ("POST", ["api", "decide"]) => self.decide(req),
            (_, ["api", ..]) | ("POST", _) => Response::text(405, "method not allowed"),
            _ => Response::text(404, "not found"),
        }
    }

    fn with_domain(
        &self,
        name: &str,
        f: impl FnOnce(Arc<DomainData>) -> Result<String, String>,
    ) -> Response {
        let Some(domain) = self.domain(name) else {
            return Response::text(404, format!("no domain '{name}' in this run"));
        };
        match self.data(domain).and_then(f) {
            Ok(html) => Response::html(html),
            Err(e) if e.starts_with("no task") => Response::text(404, e),
            Err(e) => Response::text(500, e),
        }
    }

    /// `POST /api/decide` {domain, task_id, content, decision, reason?, edit?}.
    fn decide(&self, req: &Request) -> Response {
        let bad = |status: u16, e: String| Response::json(status, &json!({ "error": e }));
        let is_json = req
            .header("content-type")
            .is_some_and(|c| c.to_ascii_lowercase().starts_with("application/json"));
        if !is_json {
            return bad(400, "decisions are posted as application/json".into());
        }
        if let (Some(origin), Some(host)) = (req.header("origin"), req.header("host"))
            && origin != format!("http://{host}")
        {
            return bad(403, format!("cross-origin request from {origin} refused"));
        }
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Body {
            domain: String,
            task_id: String,
            content: String,
            decision: Decision,
            #[serde(default)]
            reason: Option<String>,
            #[serde(default)]
            edit: Option<Edit>,
        }
        let body: Body = match serde_json::from_slice(&req.body) {
            Ok(b) => b,
            Err(e) => return bad(400, format!("request body: {e}")),
        };
        let Some(domain) = self.domain(&body.domain) else {
            return bad(404, format!("no domain '{}' in this run", body.domain));
        };
        let data = match self.data(domain) {
            Ok(d) => d,
            Err(e) => return bad(500, e),
        };
        let Some(c) = data.get(&body.task_id) else {
            return bad(
                404,
                format!("no task '{}' in {}", body.task_id, body.domain),
            );
        };
        if c.task.split != crate::split::Split::Eval {
            return bad(
                409,
                "decisions apply to the evaluation release; this is a training task".into(),
            );
        }
        if !pages::reviewable(c) {
            return bad(
                409,
                "this task did not pass verification or screening: it cannot be released".into(),
            );
        }
        let current = crate::review::content_hash(&c.task);
        if body.content != current {
            return bad(
                409,
                "the task changed since this page was loaded: reload it and review again".into(),
            );
        }
        if let (Decision::Edit, Some(edit)) = (body.decision, &body.edit) {
            let Some(env) = data.env(c.task.split) else {
                return bad(409, "the run has no database to verify the edit on".into());
            };
            if let Err(e) = crate::review::verify_edit(env, &c.task, edit, &self.cfg.gates) {
                return bad(400, format!("edit refused: {e}"));
            }
        }
        let line = ReviewLine {
            task_id: c.task.task_id.clone(),
            content: current,
            decision: body.decision,
            reason: body
                .reason
                .map(|r| r.trim().to_string())
                .filter(|r| !r.is_empty()),
            edit: body.edit,
            reviewer: self.reviewer.clone(),
        };
        let _guard = self.save.lock().unwrap();
        match crate::review::append(&self.reviews_path(domain.name()), &line) {
            Ok(()) => {
                let reviews = self.reviews(domain.name()).unwrap_or_default();
                Response::json(
                    200,
                    &json!({ "ok": true, "state": reviews.state(&c.task).as_str() }),
                )
            }
            Err(e) => bad(400, e),
        }
    }
}

/// Bind, print the address, and serve until killed. A non-loopback address needs a token.
pub fn run(app: App, opts: &Options) -> Result<(), String> {
    if !opts.bind.is_loopback() && app.token.is_none() {
        return Err(format!(
            "--bind {}: serving beyond this machine needs --token (or TRACER_REVIEW_TOKEN)",
            opts.bind
        ));
    }
    let listener = http::bind(SocketAddr::new(opts.bind, opts.port))
        .map_err(|e| format!("--port {}: {e}", opts.port))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let host = if opts.bind.is_unspecified() {
        "127.0.0.1".to_string()
    } else {
        opts.bind.to_string()
    };
    let query = app
        .token
        .as_ref()
        .map(|t| format!("/?token={t}"))
        .unwrap_or_default();
    println!("tracer review: http://{host}:{}{query}", addr.port());
    println!(
        "decisions go to {}/<domain>.jsonl as {}; Ctrl-C stops",
        app.paths.root.join(&app.cfg.reviews_dir).display(),
        app.reviewer
    );
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let app = Arc::new(app);
    http::serve(listener, Arc::new(move |req: &Request| app.handle(req)));
    Ok(())
}
