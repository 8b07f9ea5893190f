//! `tracer review`: a local web app for the paper's last stage, manual review of the
//! evaluation candidates by one person or a team. One binary, assets embedded, no
//! JavaScript toolchain: pages are rendered on the server, a small script adds keyboard
//! shortcuts and posts decisions.
//!
//! - `/`: the domains, with their candidates and review progress (what is left for you);
//! - `/d/<domain>`: the task list, filtered by split, verification, screening, emotion
//!   family, fault kind (from `tracer analyze`), review state and assignment, and searched;
//!   progress of the filtered set ("12 of 146 left") and a bulk accept / reject of it;
//! - `/d/<domain>/t/<task>`: one task: instruction, emotion condition and instruction,
//!   feeling, gold actions with their replayed outputs, `outputs` (an edit's values with the
//!   original beside them), the trace's path on the dependency graph, the verification
//!   verdict, every screening / eval / rollout episode as a conversation, the decision
//!   panel (accept, reject with a reason, edit, undo) and the history with each edit's diff;
//! - `/d/<domain>/graph`: the dependency graph drawn as SVG, each edge with its executed
//!   witness and its keep / drop decision;
//! - `POST /api/decide`, `/api/undo`, `/api/bulk`, `/api/edge`: decisions as JSON (see
//!   `api.rs`). An edit is re-verified by replay first; a bad one is refused with the reason
//!   and nothing is written. Decisions are appended to `reviews/<domain>.jsonl` (see
//!   [`crate::review`]), which the `reviewed` stage applies; edge decisions to
//!   `reviews/graphs/<domain>.jsonl`, which the `graphs` stage applies.
//!
//! A domain's artifacts are read once, in the background from the start (the index answers
//! at once and shows the domains still being read; every domain's lists first, then the
//! episodes and databases task pages need), and again after a run changed them.
//!
//! Safe by default: binds 127.0.0.1; any other address needs `--token`, which every
//! request must then carry (query, cookie or `X-Tracer-Token`); request size limits; a
//! request's path only selects among the domains and task ids in memory, never a file;
//! decisions must be JSON (a cross-site form cannot post one) and are written under a lock,
//! so two tabs saving at once never interleave.
//!
//! Architecture invariant: reads artifacts through `artifact` and `project`, decisions
//! through `review`, graphs through `graph`; writes nothing but the decisions files.

mod api;
pub mod data;
mod pages;

use crate::config::Paths;
use crate::http::{self, Request, Response, constant_time_eq};
use crate::review::{Assignment, Reviews};
use data::DomainData;
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// How `tracer review` was asked to run.
#[derive(Clone, Debug)]
pub struct Options {
    pub bind: IpAddr,
    pub port: u16,
    pub token: Option<String>,
    pub reviewer: String,
    /// Whether a task page moves on to the next open task after a decision (the page has
    /// a switch; this is its default).
    pub auto_advance: bool,
}

/// One domain's data: read on first use (or by the background reader), again when a run
/// changed its artifacts. The lock is held while reading, so a page waiting for a domain
/// the background reader is on waits for that read instead of starting its own.
type Slot = Mutex<Option<Arc<DomainData>>>;

pub struct App {
    paths: Paths,
    domains: Vec<&'static dyn crate::domain::Domain>,
    slots: HashMap<&'static str, Slot>,
    warming: AtomicBool,
    cfg: crate::review::ReviewedConfig,
    /// The graphs stage's folder of edge decisions.
    edge_dir: String,
    reviewer: String,
    auto_advance: bool,
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
        let (_, graphs) = paths.stage_table("graphs").map_err(|e| e.to_string())?;
        let edge_dir = graphs
            .get("reviews_dir")
            .and_then(|v| v.as_str())
            .unwrap_or("reviews")
            .to_string();
        // Every decisions file must read before the app starts: a broken one is fixed by hand.
        for d in &domains {
            Reviews::read(&crate::review::reviews_path(
                &paths.root,
                &cfg.reviews_dir,
                d.name(),
            ))?;
            crate::review::edges::EdgeReviews::read(&crate::review::edges::edge_reviews_path(
                &paths.root,
                &edge_dir,
                d.name(),
            ))?;
        }
        Assignment::read(&crate::review::assignment_path(
            &paths.root,
            &cfg.reviews_dir,
        ))?;
        Ok(App {
            slots: domains
                .iter()
                .map(|d| (d.name(), Mutex::new(None)))
                .collect(),
            paths,
            domains,
            warming: AtomicBool::new(false),
            cfg,
            edge_dir,
            reviewer: opts.reviewer.clone(),
            auto_advance: opts.auto_advance,
            token: opts.token.clone(),
            save: Mutex::new(()),
        })
    }

    fn domain(&self, name: &str) -> Option<&'static dyn crate::domain::Domain> {
        self.domains.iter().copied().find(|d| d.name() == name)
    }

    fn slot(&self, domain: &str) -> std::sync::MutexGuard<'_, Option<Arc<DomainData>>> {
        self.slots[domain]
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A domain's data, read on first use and again after a run changed its artifacts.
    fn data(&self, domain: &'static dyn crate::domain::Domain) -> Result<Arc<DomainData>, String> {
        let mut slot = self.slot(domain.name());
        if let Some(d) = slot.as_ref()
            && d.stamp == data::stamp(&self.paths, domain.name())
        {
            return Ok(Arc::clone(d));
        }
        let loaded = Arc::new(DomainData::load(&self.paths, domain)?);
        *slot = Some(Arc::clone(&loaded));
        Ok(loaded)
    }

    /// A domain's data if it is read and current, without waiting: `None` while it is
    /// being read or was never read (the index shows it as loading).
    fn ready(&self, domain: &'static dyn crate::domain::Domain) -> Option<Arc<DomainData>> {
        let slot = match self.slots[domain.name()].try_lock() {
            Ok(s) => s,
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return None,
        };
        slot.as_ref()
            .filter(|d| d.stamp == data::stamp(&self.paths, domain.name()))
            .cloned()
    }

    /// Read every domain not yet read (or changed since) on a background thread, one at a
    /// time; a second call while one runs does nothing.
    fn warm(self: &Arc<Self>) {
        if self.warming.swap(true, Ordering::SeqCst) {
            return;
        }
        let app = Arc::clone(self);
        let spawned = std::thread::Builder::new()
            .name("review-warm".into())
            .spawn(move || {
                // Every domain's lists first, then what task pages need. An unreadable
                // domain shows its error when asked for; keep going.
                for d in app.domains.clone() {
                    let _ = app.data(d);
                }
                for d in app.domains.clone() {
                    if let Some(data) = app.ready(d) {
                        let _ = data.task_pages();
                    }
                }
                app.warming.store(false, Ordering::SeqCst);
            });
        if spawned.is_err() {
            self.warming.store(false, Ordering::SeqCst);
        }
    }

    fn reviews_path(&self, domain: &str) -> std::path::PathBuf {
        crate::review::reviews_path(&self.paths.root, &self.cfg.reviews_dir, domain)
    }

    fn reviews(&self, domain: &str) -> Result<Reviews, String> {
        Reviews::read(&self.reviews_path(domain))
    }

    fn edge_reviews_path(&self, domain: &str) -> std::path::PathBuf {
        crate::review::edges::edge_reviews_path(&self.paths.root, &self.edge_dir, domain)
    }

    /// The assignment file as it is now (it may change while the app runs).
    fn assignment(&self) -> Result<Option<Assignment>, String> {
        Assignment::read(&crate::review::assignment_path(
            &self.paths.root,
            &self.cfg.reviews_dir,
        ))
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
    pub fn handle(self: &Arc<Self>, req: &Request) -> Response {
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

    fn route(self: &Arc<Self>, req: &Request) -> Response {
        let segments: Vec<&str> = req.path.split('/').filter(|s| !s.is_empty()).collect();
        match (req.method.as_str(), segments.as_slice()) {
            ("GET", []) => {
                let page = pages::index(self);
                if page.loading {
                    self.warm();
                }
                Response::html(page.html)
            }
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
                let team = pages::Team::new(self, &d)?;
                Ok(pages::task_list(&d, &reviews, &team, req))
            }),
            ("GET", ["d", domain, "t", task]) => self.with_domain(domain, |d| {
                let reviews = self.reviews(domain)?;
                let team = pages::Team::new(self, &d)?;
                match d.get(task) {
                    Some(c) => Ok(pages::task_page(self, &d, c, &reviews, &team, req)),
                    None => Err(format!("no task '{task}' in {domain}")),
                }
            }),
            ("GET", ["d", domain, "graph"]) => {
                self.with_domain(domain, |d| pages::graph_page(self, &d, req))
            }
            ("POST", ["api", "decide"]) => api::decide(self, req),
            ("POST", ["api", "undo"]) => api::undo(self, req),
            ("POST", ["api", "bulk"]) => api::bulk(self, req),
            ("POST", ["api", "edge"]) => api::edge(self, req),
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
    app.warm();
    http::serve(listener, Arc::new(move |req: &Request| app.handle(req)));
    Ok(())
}
