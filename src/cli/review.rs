//! `tracer review`: the manual review web app on a finished run (see `crate::review_app`).

use super::CliError;
use crate::config::Paths;

#[derive(Debug, clap::Args)]
pub struct ReviewArgs {
    /// Domains to show (repeatable); default: the pipeline's domains.
    #[arg(long = "domain")]
    pub domains: Vec<String>,
    /// Address to bind. Anything but loopback needs --token.
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: std::net::IpAddr,
    /// Port (0: any free port; the address is printed).
    #[arg(long, default_value_t = 8765)]
    pub port: u16,
    /// A secret every request must carry (also TRACER_REVIEW_TOKEN).
    #[arg(long)]
    pub token: Option<String>,
    /// Your name on each decision (also TRACER_REVIEWER; default: $USER). With an
    /// assignment (reviews/assignment.toml), what is left for you is what is yours.
    #[arg(long)]
    pub reviewer: Option<String>,
    /// Stay on a task after deciding it (the default moves on to the next open task of the
    /// list; the page has a switch that overrides this for the browser).
    #[arg(long)]
    pub no_auto_advance: bool,
}

pub fn review(paths: &Paths, args: ReviewArgs) -> Result<(), CliError> {
    let domains = super::resolve_domains(paths, &args.domains)?;
    let reviewer = args
        .reviewer
        .or_else(|| std::env::var("TRACER_REVIEWER").ok())
        .or_else(|| std::env::var("USER").ok())
        .map(|r| r.trim().to_string())
        .filter(|r| !r.is_empty())
        .unwrap_or_else(|| "anonymous".into());
    let opts = crate::review_app::Options {
        bind: args.bind,
        port: args.port,
        token: args
            .token
            .or_else(|| std::env::var("TRACER_REVIEW_TOKEN").ok())
            .filter(|t| !t.is_empty()),
        reviewer,
        auto_advance: !args.no_auto_advance,
    };
    let app =
        crate::review_app::App::new(paths.clone(), domains, &opts).map_err(CliError::Failed)?;
    crate::review_app::run(app, &opts).map_err(CliError::Failed)
}
