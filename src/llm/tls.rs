//! HTTPS for endpoint roles (the `tls` feature, on by default): rustls with the `ring`
//! crypto provider, handed to reqwest as a ready `rustls::ClientConfig`.
//!
//! Which certificates an endpoint may present, per HTTP client:
//! - the system's root store, as OpenSSL and curl see it (Debian: `/etc/ssl/certs` from the
//!   `ca-certificates` package; `SSL_CERT_FILE` / `SSL_CERT_DIR` replace it, as they do for
//!   OpenSSL), read once per process;
//! - when the system has no roots at all (a slim container without `ca-certificates`),
//!   Mozilla's roots as bundled in the `webpki-roots` crate instead, so HTTPS works without
//!   an apt package;
//! - plus every certificate in the PEM file named by [`CA_BUNDLE_VAR`] (a private CA, a
//!   self-signed vLLM), added on top.
//!
//! Why ring rather than aws-lc-rs (reqwest's default) or the system's OpenSSL (native-tls):
//! build time and what a fresh machine needs; the measured figures are in Cargo.toml.
//! Why a ready config rather than reqwest's own verifier (rustls-platform-verifier): that
//! one fails to build any client - plain-HTTP ones included - on a machine without system
//! roots, and needs a process-wide crypto provider.

use rustls::RootCertStore;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use std::sync::{Arc, OnceLock};

use crate::llm::EnvLookup;
use crate::llm::error::LlmError;

/// A PEM file of extra certificate authorities to trust (added to the default roots).
pub const CA_BUNDLE_VAR: &str = "TRACER_CA_BUNDLE";

/// The roots every client starts from: the system's, or Mozilla's when the system has none.
fn default_roots() -> &'static RootCertStore {
    static ROOTS: OnceLock<RootCertStore> = OnceLock::new();
    ROOTS.get_or_init(|| {
        let mut roots = RootCertStore::empty();
        // Unreadable or unparsable system certificates are skipped, as curl skips them.
        roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
        if roots.is_empty() {
            roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        }
        roots
    })
}

/// The TLS configuration of one endpoint's client: default roots plus the CA bundle named
/// by [`CA_BUNDLE_VAR`] in `env`. A bundle that cannot be read, or holds no certificate, is
/// a config error naming the variable and the file.
pub(crate) fn client_config(
    context: &str,
    env: &EnvLookup,
) -> Result<rustls::ClientConfig, LlmError> {
    let bad = |message: String| LlmError::Config {
        context: context.to_string(),
        message,
    };
    let mut roots = default_roots().clone();
    if let Some(path) = env(CA_BUNDLE_VAR).filter(|p| !p.trim().is_empty()) {
        let bad_file = |why: String| bad(format!("env var {CA_BUNDLE_VAR}: '{path}': {why}"));
        let certs = CertificateDer::pem_file_iter(&path)
            .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
            .map_err(|e| bad_file(e.to_string()))?;
        if certs.is_empty() {
            return Err(bad_file("no PEM certificate in it".to_string()));
        }
        for cert in certs {
            roots
                .add(cert)
                .map_err(|e| bad_file(format!("not a usable CA certificate: {e}")))?;
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| bad(format!("cannot set up TLS: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth())
}

/// When `e` failed because the server's certificate was refused, why, in words (with what
/// to do about it where there is something to do). `None` for every other failure.
pub(crate) fn certificate_problem(e: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut cur = Some(e);
    while let Some(err) = cur {
        if let Some(rustls::Error::InvalidCertificate(why)) = rustls_error(err) {
            return Some(describe(why));
        }
        cur = err.source();
    }
    None
}

/// `err` as a rustls error, looking through `io::Error` wrappers: tokio-rustls wraps the
/// handshake's error in one and hyper-rustls wraps that in another, and `io::Error::source`
/// skips the error it wraps, so the source chain alone never reaches it.
fn rustls_error<'a>(err: &'a (dyn std::error::Error + 'static)) -> Option<&'a rustls::Error> {
    if let Some(tls) = err.downcast_ref::<rustls::Error>() {
        return Some(tls);
    }
    rustls_error(err.downcast_ref::<std::io::Error>()?.get_ref()?)
}

fn describe(why: &rustls::CertificateError) -> String {
    use rustls::CertificateError as C;
    match why {
        C::UnknownIssuer => format!(
            "it is not signed by a certificate authority Tracer trusts (to trust a private \
             or self-signed CA, name its PEM file in {CA_BUNDLE_VAR})"
        ),
        C::NotValidForName | C::NotValidForNameContext { .. } => {
            "it is not valid for this host name".to_string()
        }
        C::Expired | C::ExpiredContext { .. } => "it has expired".to_string(),
        C::NotValidYet | C::NotValidYetContext { .. } => "it is not valid yet".to_string(),
        C::Revoked => "it has been revoked".to_string(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io;

    #[test]
    fn a_refused_certificate_is_found_through_io_wrappers() {
        // As hyper-rustls hands it to reqwest: io::Error::other(io::Error(InvalidData, rustls)).
        let tls = rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer);
        let wrapped = io::Error::other(io::Error::new(io::ErrorKind::InvalidData, tls));
        let why = certificate_problem(&wrapped).unwrap();
        assert!(why.contains(CA_BUNDLE_VAR), "{why}");
        let expired = rustls::Error::InvalidCertificate(rustls::CertificateError::Expired);
        assert_eq!(
            certificate_problem(&io::Error::other(expired)).as_deref(),
            Some("it has expired")
        );
        // Other failures, TLS or not, are not certificate problems.
        let refused = io::Error::new(io::ErrorKind::ConnectionRefused, "refused");
        assert_eq!(certificate_problem(&refused), None);
        let alert = rustls::Error::AlertReceived(rustls::AlertDescription::HandshakeFailure);
        assert_eq!(certificate_problem(&io::Error::other(alert)), None);
    }

    #[test]
    fn default_roots_are_never_empty() {
        assert!(!default_roots().is_empty());
    }
}
