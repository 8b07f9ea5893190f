//! HTTPS from the default build: a loopback OpenAI-compatible server behind TLS with a
//! throwaway CA and server certificate made here (rcgen), nothing from the network. The
//! client trusts that CA only through `TRACER_CA_BUNDLE`: with it a role's chat call and
//! preflight succeed; without it they fail with one line that names the endpoint and says
//! the certificate is not trusted, without retrying.

use crate::openai_server::OpenAiServer;
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair, KeyUsagePurpose,
};
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tracer::llm::tls::CA_BUNDLE_VAR;
use tracer::llm::{
    ChatMessage, ChatModel, ChatRequest, EnvLookup, ErrorKind, Role, RoleConfig, RoleModel,
    build_role_with_env, preflight_with_env,
};

const MODEL: &str = "test-model";

/// A throwaway CA, and a server certificate it signed for 127.0.0.1 and localhost: the
/// server's TLS configuration and the CA certificate as PEM.
fn throwaway_pki() -> (Arc<rustls::ServerConfig>, String) {
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "Tracer throwaway test CA");
    ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();

    let server_key = KeyPair::generate().unwrap();
    let server_cert =
        CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".to_string()])
            .unwrap()
            .signed_by(&server_key, &*ca)
            .unwrap();

    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(server_key.serialize_der()));
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(vec![server_cert.der().clone(), ca.der().clone()], key)
    .unwrap();
    (Arc::new(config), ca.pem())
}

fn config(base_url: &str) -> RoleConfig {
    let text = format!(
        "provider = \"openai\"\nbase_url = \"{base_url}\"\nmodel = \"{MODEL}\"\nretry_initial_ms = 10\nmax_retries = 2\n"
    );
    RoleConfig::from_toml("role 'agent'", &text).unwrap()
}

fn hello() -> ChatRequest {
    ChatRequest::new(vec![
        ChatMessage::system("You are a customer-service agent."),
        ChatMessage::user("hello over TLS"),
    ])
}

/// An environment where only `TRACER_CA_BUNDLE` may be set.
fn env_with_bundle(bundle: Option<PathBuf>) -> impl Fn(&str) -> Option<String> + Sync + 'static {
    move |name: &str| {
        (name == CA_BUNDLE_VAR)
            .then(|| bundle.as_ref().map(|p| p.display().to_string()))
            .flatten()
    }
}

fn chat_model(cfg: &RoleConfig, cache: &Path, env: &EnvLookup) -> Arc<dyn ChatModel> {
    match build_role_with_env(Role::Agent, cfg, cache, env).unwrap() {
        RoleModel::Endpoint(m) => m,
        RoleModel::Scripted(_) => panic!("expected an endpoint role"),
    }
}

#[tokio::test]
async fn https_endpoint_with_a_trusted_throwaway_ca() {
    let (tls, ca_pem) = throwaway_pki();
    let server = OpenAiServer::start_tls(&[MODEL], tls);
    let url = server.base_url();
    assert!(url.starts_with("https://127.0.0.1:"), "{url}");
    let dir = crate::common::temp_dir("tls-trusted");
    let bundle = dir.join("throwaway-ca.pem");
    std::fs::write(&bundle, &ca_pem).unwrap();
    let env = env_with_bundle(Some(bundle));
    let cfg = config(&url);

    preflight_with_env("role 'agent'", &cfg, &env)
        .await
        .unwrap();
    let model = chat_model(&cfg, &dir.join("cache.redb"), &env);
    let r = model.chat(hello()).await.unwrap();
    assert_eq!(r.message.content.as_deref(), Some("echo: hello over TLS"));
    assert_eq!(r.model, MODEL);
    // Preflight's GET /models, the role's own look at /models, then the chat call.
    let seen = server.requests();
    assert!(
        seen.iter()
            .all(|r| r.method == "GET" || r.path == "/v1/chat/completions")
    );
    assert_eq!(server.post_count(), 1);
    assert_eq!(seen.last().unwrap().path, "/v1/chat/completions");
}

#[tokio::test]
async fn https_endpoint_with_an_untrusted_certificate_fails_in_one_line() {
    let (tls, _) = throwaway_pki();
    let server = OpenAiServer::start_tls(&[MODEL], tls);
    let url = server.base_url();
    let dir = crate::common::temp_dir("tls-untrusted");
    let env = env_with_bundle(None);
    let cfg = config(&url);
    let expected = format!(
        "role 'agent': endpoint {url}: TLS certificate not trusted: it is not signed by a \
         certificate authority Tracer trusts (to trust a private or self-signed CA, name its \
         PEM file in {CA_BUNDLE_VAR})"
    );

    let err = preflight_with_env("role 'agent'", &cfg, &env)
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), expected);

    let model = chat_model(&cfg, &dir.join("cache.redb"), &env);
    let err = model.chat(hello()).await.unwrap_err();
    assert_eq!(err.to_string(), expected);
    assert!(!err.to_string().contains('\n'));
    assert_eq!(err.kind(), ErrorKind::Connection);
    assert!(
        !err.is_retryable(),
        "a refused certificate is not transient"
    );
    let stats = model.stats();
    assert_eq!(stats.http_requests, 1, "tried once, not retried");
    assert!(
        server.requests().is_empty(),
        "no request got past the handshake"
    );
}

#[tokio::test]
async fn an_unusable_ca_bundle_is_a_config_error() {
    let (tls, _) = throwaway_pki();
    let server = OpenAiServer::start_tls(&[MODEL], tls);
    let cfg = config(&server.base_url());
    let dir = crate::common::temp_dir("tls-bad-bundle");

    let missing = dir.join("missing.pem");
    let err = preflight_with_env(
        "role 'agent'",
        &cfg,
        &env_with_bundle(Some(missing.clone())),
    )
    .await
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Config);
    let text = err.to_string();
    assert!(
        text.starts_with(&format!(
            "role 'agent': env var {CA_BUNDLE_VAR}: '{}': ",
            missing.display()
        )),
        "{text}"
    );

    let empty = dir.join("empty.pem");
    std::fs::write(&empty, "not a certificate\n").unwrap();
    let err = preflight_with_env("role 'agent'", &cfg, &env_with_bundle(Some(empty.clone())))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "role 'agent': env var {CA_BUNDLE_VAR}: '{}': no PEM certificate in it",
            empty.display()
        )
    );
    assert!(server.requests().is_empty());
}
