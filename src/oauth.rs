//! quire as an OAuth 2.1 resource server (`05-mcp.md`, "Authorization"):
//! bearer JWTs from the team's identity provider, verified against its
//! JWKS, name the user and their role. quire never issues tokens; it
//! publishes its protected resource metadata (RFC 9728) so that a remote
//! MCP client knows where to get one.
//!
//! A token is accepted when it is a JWS signed with RS256, PS256, ES256 or
//! EdDSA by the JWKS key its `kid` names, its `iss` is the issuer, its
//! `aud` holds the audience, and `exp`/`nbf` hold within a minute's skew.
//! Keys come from `jwks_file` (read when the config is loaded) or
//! `jwks_url` (fetched when first needed, and again, at most once a minute,
//! when a token names a `kid` the cached set lacks: the provider rotated
//! its keys).

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Value, json};
use tokio::sync::Mutex;

use crate::access::{Caller, Grant};
use crate::config::schema::{OAuthConfig, Role};

/// The metadata's path (RFC 9728 §3).
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";
/// `/mcp`'s own (RFC 9728 §3.1: the resource's path after the well-known
/// one).
pub const MCP_METADATA_PATH: &str = "/.well-known/oauth-protected-resource/mcp";

/// The signature algorithms a token may use: asymmetric only (an HMAC
/// token would need a secret shared with quire, which it never holds).
const ALGORITHMS: [Algorithm; 4] = [
    Algorithm::RS256,
    Algorithm::PS256,
    Algorithm::ES256,
    Algorithm::EdDSA,
];

/// Clock skew allowed on `exp` and `nbf`.
const LEEWAY_SECS: u64 = 60;

/// A token longer than this is refused unread (a real one is ~1-2 KB).
pub const MAX_TOKEN_BYTES: usize = 8 << 10;

/// How often `jwks_url` may be fetched again for an unknown `kid`.
const REFETCH_EVERY: Duration = Duration::from_secs(60);

/// The largest JWKS document read from `jwks_url`.
const MAX_JWKS_BYTES: usize = 1 << 20;

/// Why a token was not taken, logged (never the token).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rejection {
    /// Not a valid token of the issuer for this resource: `401
    /// invalid_token`, counted as a failed sign-in.
    Invalid(String),
    /// A valid token naming no usable user or role: `403 forbidden_role`.
    NoRole(String),
}

use Rejection::{Invalid, NoRole};

/// The verifier of one `[server.oauth]` section.
#[derive(Debug)]
pub struct OAuth {
    pub config: OAuthConfig,
    keys: Mutex<Keys>,
    /// What every token-bearing caller of this configuration holds open; a
    /// reload that changes the section revokes it.
    pub grant: Grant,
    /// For `jwks_url`, made when first needed.
    http: std::sync::OnceLock<reqwest::Client>,
}

#[derive(Debug, Default)]
struct Keys {
    set: Option<JwkSet>,
    /// When `jwks_url` was last fetched (successfully or not).
    fetched: Option<Instant>,
}

impl OAuth {
    /// The verifier of `config`; a `jwks_file` is read now (a file that
    /// cannot be read or parsed leaves no keys: every token is refused).
    pub fn new(config: &OAuthConfig) -> OAuth {
        let set = config
            .jwks_file
            .as_deref()
            .and_then(|path| match read_jwks(path) {
                Ok(set) => Some(set),
                Err(why) => {
                    tracing::error!("server.oauth.jwks_file: {why}; every OAuth token is refused");
                    None
                }
            });
        OAuth {
            config: config.clone(),
            keys: Mutex::new(Keys { set, fetched: None }),
            grant: Grant::default(),
            http: std::sync::OnceLock::new(),
        }
    }

    /// RFC 9728 metadata of this resource.
    pub fn metadata(&self) -> Value {
        json!({
            "resource": self.config.audience,
            "authorization_servers": [self.config.issuer],
            "bearer_methods_supported": ["header"],
        })
    }

    /// Whether `token` is shaped as a JWS (three base64url parts), so worth
    /// verifying rather than refusing as an unknown static token.
    pub fn looks_like_jwt(token: &str) -> bool {
        token.split('.').count() == 3
    }

    /// The caller a valid token names; why not otherwise.
    pub async fn verify(&self, token: &str) -> Result<Caller, Rejection> {
        if token.len() > MAX_TOKEN_BYTES {
            return Err(Invalid(format!(
                "a token of {} bytes (at most {MAX_TOKEN_BYTES})",
                token.len()
            )));
        }
        let header = jsonwebtoken::decode_header(token)
            .map_err(|e| Invalid(format!("not a JWT quire accepts ({e})")))?;
        if !ALGORITHMS.contains(&header.alg) {
            return Err(Invalid(format!(
                "signed with {:?}; only RS256, PS256, ES256 and EdDSA are accepted",
                header.alg
            )));
        }
        let kid = header
            .kid
            .ok_or_else(|| Invalid("no `kid` in its header".into()))?;
        let key = self.key(&kid).await?;
        let mut validation = Validation::new(header.alg);
        validation.leeway = LEEWAY_SECS;
        validation.validate_nbf = true;
        validation.set_issuer(&[&self.config.issuer]);
        validation.set_audience(&[&self.config.audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        let claims =
            jsonwebtoken::decode::<serde_json::Map<String, Value>>(token, &key, &validation)
                .map_err(|e| Invalid(refusal(&e)))?
                .claims;
        let user = claims
            .get(&self.config.user_claim)
            .and_then(Value::as_str)
            .filter(|u| !u.is_empty() && u.len() <= 256)
            .ok_or_else(|| {
                NoRole(format!(
                    "the token has no `{}` claim naming its user",
                    self.config.user_claim
                ))
            })?;
        let role = claims
            .get(&self.config.role_claim)
            .and_then(role_of)
            .ok_or_else(|| {
                NoRole(format!(
                    "the token's `{}` claim names no role quire knows (read, suggest, edit, \
                     review, admin)",
                    self.config.role_claim
                ))
            })?;
        Ok(Caller {
            name: Some(Arc::from(user)),
            role,
            grant: self.grant.clone(),
        })
    }

    /// The decoding key of `kid`: from the cached set, or (for a
    /// `jwks_url`) after fetching it, at most once a minute.
    async fn key(&self, kid: &str) -> Result<DecodingKey, Rejection> {
        let mut keys = self.keys.lock().await;
        let cached = keys.set.as_ref().and_then(|set| set.find(kid)).cloned();
        let jwk = match (cached, &self.config.jwks_url) {
            (Some(jwk), _) => jwk,
            (None, Some(url)) if keys.fetched.is_none_or(|t| t.elapsed() >= REFETCH_EVERY) => {
                keys.fetched = Some(Instant::now());
                let http = self.http.get_or_init(|| {
                    quire_core::install_tls_provider();
                    reqwest::Client::new()
                });
                match fetch_jwks(http, url).await {
                    Ok(set) => keys.set = Some(set),
                    Err(why) => {
                        tracing::warn!("cannot fetch server.oauth.jwks_url {url}: {why}");
                    }
                }
                keys.set
                    .as_ref()
                    .and_then(|set| set.find(kid))
                    .cloned()
                    .ok_or_else(|| Invalid(format!("its key `{kid}` is not in the JWKS")))?
            }
            (None, _) => return Err(Invalid(format!("its key `{kid}` is not in the JWKS"))),
        };
        DecodingKey::from_jwk(&jwk).map_err(|e| Invalid(format!("the JWKS key `{kid}`: {e}")))
    }
}

/// A role claim: one name, or a list counting as its highest known role.
fn role_of(claim: &Value) -> Option<Role> {
    let one = |name: &str| match name {
        "read" => Some(Role::Read),
        "suggest" => Some(Role::Suggest),
        "edit" => Some(Role::Edit),
        "review" => Some(Role::Review),
        "admin" => Some(Role::Admin),
        _ => None,
    };
    match claim {
        Value::String(name) => one(name),
        Value::Array(names) => names.iter().filter_map(Value::as_str).filter_map(one).max(),
        _ => None,
    }
}

/// A verification error told as a reason.
fn refusal(e: &jsonwebtoken::errors::Error) -> String {
    use jsonwebtoken::errors::ErrorKind;
    match e.kind() {
        ErrorKind::ExpiredSignature => "it has expired".into(),
        ErrorKind::ImmatureSignature => "it is not valid yet (nbf)".into(),
        ErrorKind::InvalidIssuer => "a wrong issuer".into(),
        ErrorKind::InvalidAudience => "a wrong audience".into(),
        ErrorKind::InvalidSignature => "a bad signature".into(),
        ErrorKind::MissingRequiredClaim(claim) => format!("no `{claim}` claim"),
        ErrorKind::InvalidAlgorithm => "its algorithm does not fit its key".into(),
        other => format!("not a valid token ({other:?})"),
    }
}

fn read_jwks(path: &Path) -> Result<JwkSet, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    parse_jwks(&bytes).map_err(|e| format!("{} is not a JWKS: {e}", path.display()))
}

/// Checks a JWKS file as the config is loaded.
pub fn check_jwks_file(path: &Path) -> Result<(), String> {
    read_jwks(path).map(|_| ())
}

fn parse_jwks(bytes: &[u8]) -> Result<JwkSet, serde_json::Error> {
    serde_json::from_slice(bytes)
}

async fn fetch_jwks(http: &reqwest::Client, url: &str) -> Result<JwkSet, String> {
    let response = http
        .get(url)
        .timeout(Duration::from_secs(10))
        .send()
        .await
        .and_then(reqwest::Response::error_for_status)
        .map_err(|e| e.to_string())?;
    if response
        .content_length()
        .is_some_and(|n| n > MAX_JWKS_BYTES as u64)
    {
        return Err(format!("larger than {MAX_JWKS_BYTES} bytes"));
    }
    let bytes = response.bytes().await.map_err(|e| e.to_string())?;
    if bytes.len() > MAX_JWKS_BYTES {
        return Err(format!("larger than {MAX_JWKS_BYTES} bytes"));
    }
    parse_jwks(&bytes).map_err(|e| format!("not a JWKS: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_role_claim_is_a_name_or_a_list_counting_its_highest() {
        assert_eq!(role_of(&json!("edit")), Some(Role::Edit));
        assert_eq!(
            role_of(&json!(["read", "admin", "nobody"])),
            Some(Role::Admin)
        );
        assert_eq!(role_of(&json!(["suggest"])), Some(Role::Suggest));
        assert_eq!(role_of(&json!("owner")), None);
        assert_eq!(role_of(&json!(3)), None);
        assert_eq!(role_of(&json!([])), None);
    }

    /// Test keys (Ed25519, PKCS#8 DER) and their public halves.
    const KEY_A: &str = "302e020100300506032b6570042204209e64cecdb964e849627c82adf0e8af475b0bd0e17500bae6ac3036fb84b9dd5b";
    const PUB_A: &str = "C_KUTgZ62fr0YDMlG7rmL2rEs2OkEoIADuRlkD3Hgm8";
    const KEY_B: &str = "302e020100300506032b657004220420c1a37fd1dccfec3922edd63cd096d548303770faab2f62513271b6c722f6ac53";
    const PUB_B: &str = "6LwDno5w_BvTUce5ObHxtvsl8nW92yB9wlgaV8TLcxQ";

    fn jwk(kid: &str, x: &str) -> Value {
        json!({ "kty": "OKP", "crv": "Ed25519", "x": x, "kid": kid, "alg": "EdDSA", "use": "sig" })
    }

    fn token(kid: &str, key: &str) -> String {
        let der: Vec<u8> = (0..key.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&key[i..i + 2], 16).unwrap())
            .collect();
        let mut header = jsonwebtoken::Header::new(Algorithm::EdDSA);
        header.kid = Some(kid.into());
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let claims = json!({ "iss": "https://id.test", "aud": "http://quire.test/mcp",
            "exp": now + 300, "sub": "ana", "role": "edit" });
        jsonwebtoken::encode(
            &header,
            &claims,
            &jsonwebtoken::EncodingKey::from_ed_der(&der),
        )
        .unwrap()
    }

    /// A JWKS server whose set the test replaces, counting its fetches.
    async fn jwks_server(
        set: Arc<std::sync::Mutex<Value>>,
        fetches: Arc<std::sync::atomic::AtomicUsize>,
    ) -> String {
        let app = axum::Router::new().route(
            "/jwks",
            axum::routing::get(move || {
                let (set, fetches) = (set.clone(), fetches.clone());
                async move {
                    fetches.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    axum::Json(set.lock().unwrap().clone())
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/jwks", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        url
    }

    /// A rotated key is fetched when a token first names it, and an
    /// unknown `kid` costs at most one fetch a minute (the minute passes
    /// by setting the last fetch back: the clock is injected that way).
    #[tokio::test]
    async fn keys_rotate_with_at_most_one_fetch_a_minute() {
        let set = Arc::new(std::sync::Mutex::new(json!({ "keys": [jwk("a", PUB_A)] })));
        let fetches = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let url = jwks_server(set.clone(), fetches.clone()).await;
        let oauth = OAuth::new(&OAuthConfig {
            issuer: "https://id.test".into(),
            audience: "http://quire.test/mcp".into(),
            jwks_url: Some(url),
            jwks_file: None,
            user_claim: "sub".into(),
            role_claim: "role".into(),
        });
        let count = || fetches.load(std::sync::atomic::Ordering::SeqCst);
        let ana = oauth.verify(&token("a", KEY_A)).await.unwrap();
        assert_eq!(
            (ana.name.as_deref(), ana.role, count()),
            (Some("ana"), Role::Edit, 1)
        );
        oauth.verify(&token("a", KEY_A)).await.unwrap();
        assert_eq!(count(), 1, "a known key is not fetched again");

        // The provider rotates to `b`; within the minute, no second fetch.
        *set.lock().unwrap() = json!({ "keys": [jwk("b", PUB_B)] });
        let refused = oauth.verify(&token("b", KEY_B)).await.unwrap_err();
        assert_eq!(refused, Invalid("its key `b` is not in the JWKS".into()));
        assert_eq!(count(), 1);

        // A minute later, one fetch finds it; then an unknown kid is one
        // more fetch at most, however many tokens name it.
        oauth.keys.lock().await.fetched = Some(Instant::now() - REFETCH_EVERY);
        oauth.verify(&token("b", KEY_B)).await.unwrap();
        assert_eq!(count(), 2);
        oauth.keys.lock().await.fetched = Some(Instant::now() - REFETCH_EVERY);
        for _ in 0..5 {
            assert!(oauth.verify(&token("z", KEY_B)).await.is_err());
        }
        assert_eq!(count(), 3);
        // The rotated-out key is gone with the old set.
        assert!(oauth.verify(&token("a", KEY_A)).await.is_err());
    }

    #[test]
    fn only_three_part_tokens_are_taken_for_jwts() {
        assert!(OAuth::looks_like_jwt("a.b.c"));
        assert!(!OAuth::looks_like_jwt("a-static-token"));
        assert!(!OAuth::looks_like_jwt("a.b.c.d.e"));
    }
}
