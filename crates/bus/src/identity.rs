//! NATS identities: the decentralized JWT setup (operator → account → users) that makes every
//! caller known to the nats-server, which enforces each one's subject permissions
//! ([`relay_contracts::access`]).
//!
//! `relayctl auth init DIR` calls [`init`]: an operator and one account (`RELAY`) whose JWTs the
//! server preloads (`nats-auth.conf`, resolver MEMORY), a `.creds` file per service, the gateway
//! and `admin`, and the harness signer: an account signing key *scoped* to the harness
//! template, so the spawner, which holds it, can mint a harness identity for each agent it
//! starts and nothing more. The JWTs are built here with the official `nkeys` crate; the Rust
//! JWT crates for NATS are young and lack scoped signing keys.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use nkeys::KeyPair;
use relay_contracts::access::{self, Permissions};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// The account every relay-mesh identity lives in.
pub const ACCOUNT_NAME: &str = "RELAY";
/// The role name of the harness signing key's scope.
const HARNESS_SCOPE: &str = "harness";

#[derive(Debug, thiserror::Error)]
pub enum IdentityError {
    #[error("{0}")]
    Key(String),
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{0}")]
    Invalid(String),
}

fn key_err(e: impl std::fmt::Display) -> IdentityError {
    IdentityError::Key(e.to_string())
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> IdentityError + '_ {
    move |source| IdentityError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// A NATS JWT: `header.claims.signature`, ed25519 by the issuer's nkey.
fn encode(claims: Value, issuer: &KeyPair) -> Result<String, IdentityError> {
    let header = URL_SAFE_NO_PAD.encode(br#"{"typ":"JWT","alg":"ed25519-nkey"}"#);
    let body = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&claims).map_err(key_err)?);
    let signing_input = format!("{header}.{body}");
    let sig = issuer.sign(signing_input.as_bytes()).map_err(key_err)?;
    Ok(format!("{signing_input}.{}", URL_SAFE_NO_PAD.encode(sig)))
}

fn claims(subject: &str, name: &str, issuer: &KeyPair, nats: Value) -> Value {
    json!({
        // The server does not check the claim id, only that there is one.
        "jti": uuid::Uuid::new_v4().simple().to_string(),
        "iat": crate::now_ms() / 1000,
        "iss": issuer.public_key(),
        "name": name,
        "sub": subject,
        "nats": nats,
    })
}

fn permission_claims(p: &Permissions) -> Value {
    let mut publish = json!({ "allow": p.publish_allow });
    if !p.publish_deny.is_empty() {
        publish["deny"] = json!(p.publish_deny);
    }
    let mut v = json!({
        "pub": publish,
        "sub": { "allow": p.subscribe_allow },
        "subs": -1, "data": -1, "payload": -1,
    });
    if p.allow_responses {
        v["resp"] = json!({ "max": 1, "ttl": 0 });
    }
    v
}

/// The text of a `.creds` file: the user JWT and its seed.
pub fn creds(jwt: &str, seed: &str) -> String {
    format!(
        "-----BEGIN NATS USER JWT-----\n{jwt}\n------END NATS USER JWT------\n\n\
         ************************* IMPORTANT *************************\n\
         NKEY Seed printed below can be used to sign and prove identity.\n\
         NKEYs are sensitive and should be treated as secrets.\n\n\
         -----BEGIN USER NKEY SEED-----\n{seed}\n------END USER NKEY SEED------\n\n\
         *************************************************************\n"
    )
}

/// A user JWT for a named identity with its permissions, signed by the account key.
fn user(name: &str, account: &KeyPair, p: &Permissions) -> Result<String, IdentityError> {
    let user = KeyPair::new_user();
    let mut nats = permission_claims(p);
    nats["type"] = json!("user");
    nats["version"] = json!(2);
    let jwt = encode(claims(&user.public_key(), name, account, nats), account)?;
    Ok(creds(&jwt, &user.seed().map_err(key_err)?))
}

/// What [`init`] wrote.
#[derive(Debug, Clone)]
pub struct Setup {
    pub dir: PathBuf,
    /// `include` this from the nats-server configuration.
    pub server_conf: PathBuf,
    /// The scoped key the spawner mints harness identities with.
    pub harness_signer: PathBuf,
}

impl Setup {
    /// The setup [`init`] wrote into `dir`.
    pub fn at(dir: &Path) -> Setup {
        Setup {
            dir: dir.to_path_buf(),
            server_conf: dir.join("nats-auth.conf"),
            harness_signer: dir.join("harness-signer.nk"),
        }
    }

    /// The harness signer, for the account the spawner's credentials name (what a spawner
    /// loads; a harness run by hand is minted with it too).
    pub fn signer(&self) -> Result<HarnessSigner, IdentityError> {
        let path = self.creds(relay_contracts::rpc::service::AGENT_SPAWNER);
        let spawner = std::fs::read_to_string(&path).map_err(io_err(&path))?;
        HarnessSigner::load(&self.harness_signer, &spawner)
    }

    /// The `.creds` file of a named identity.
    pub fn creds(&self, identity: &str) -> PathBuf {
        self.dir.join(format!("{identity}.creds"))
    }
}

/// Writes a new operator, account, every named identity's credentials and the harness signer
/// into `dir` (created; files readable by their owner only).
pub fn init(dir: &Path) -> Result<Setup, IdentityError> {
    std::fs::create_dir_all(dir).map_err(io_err(dir))?;
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(io_err(dir))?;
    }
    let operator = KeyPair::new_operator();
    let account = KeyPair::new_account();
    let signer = KeyPair::new_account();

    let op_jwt = encode(
        claims(
            &operator.public_key(),
            "relay-mesh",
            &operator,
            json!({ "type": "operator", "version": 2 }),
        ),
        &operator,
    )?;
    let template = permission_claims(&access::harness_template());
    let acc_jwt = encode(
        claims(
            &account.public_key(),
            ACCOUNT_NAME,
            &operator,
            json!({
                "type": "account", "version": 2,
                "limits": { "subs": -1, "data": -1, "payload": -1, "imports": -1, "exports": -1,
                            "wildcards": true, "conn": -1, "leaf": -1 },
                "signing_keys": [{
                    "kind": "user_scope", "key": signer.public_key(), "role": HARNESS_SCOPE,
                    "template": template,
                }],
                "default_permissions": { "pub": {}, "sub": {} },
            }),
        ),
        &operator,
    )?;
    // The server's own account (JetStream and monitoring need one); no relay identity is in it.
    let system = KeyPair::new_account();
    let sys_jwt = encode(
        claims(
            &system.public_key(),
            "SYS",
            &operator,
            json!({ "type": "account", "version": 2,
                    "limits": { "subs": -1, "data": -1, "payload": -1, "imports": -1, "exports": -1,
                                "wildcards": true, "conn": -1, "leaf": -1 } }),
        ),
        &operator,
    )?;
    let setup = Setup::at(dir);
    let conf = format!(
        "# relay-mesh NATS identities, written by `relayctl auth init`; include it from the server config.\n\
         # A service's JWT lists every subject it may use, and the CONNECT line carries it: more\n\
         # than the default 4 KB for the session registry.\n\
         max_control_line: {MAX_CONTROL_LINE}\n\
         operator: \"{op_jwt}\"\nsystem_account: {sys}\nresolver: MEMORY\nresolver_preload: {{\n  {acc}: \"{acc_jwt}\"\n  {sys}: \"{sys_jwt}\"\n}}\n",
        acc = account.public_key(),
        sys = system.public_key(),
    );
    write_private(&setup.server_conf, &conf)?;
    write_private(&dir.join("operator.nk"), &(operator.seed().map_err(key_err)? + "\n"))?;
    write_private(&dir.join("account.nk"), &(account.seed().map_err(key_err)? + "\n"))?;
    write_private(&setup.harness_signer, &(signer.seed().map_err(key_err)? + "\n"))?;
    for name in access::identities() {
        let p = access::permissions(name).expect("a named identity");
        write_private(&setup.creds(name), &user(name, &account, &p)?)?;
    }
    Ok(setup)
}

/// The NATS server's `max_control_line` the generated config sets, in bytes.
pub const MAX_CONTROL_LINE: usize = 64 * 1024;

fn write_private(path: &Path, text: &str) -> Result<(), IdentityError> {
    crate::write_file(path, text, 0o600).map_err(io_err(path))
}

/// Mints harness identities with the scoped signing key: the server gives each one the
/// harness template's permissions for its own agent id and workspace, whatever else it says.
#[derive(Clone)]
pub struct HarnessSigner {
    key: std::sync::Arc<KeyPair>,
    account: String,
}

impl HarnessSigner {
    /// The signer seed file, and the account it signs for (read from the caller's own creds,
    /// which the account key issued).
    pub fn load(seed_file: &Path, own_creds: &str) -> Result<HarnessSigner, IdentityError> {
        let seed = std::fs::read_to_string(seed_file).map_err(io_err(seed_file))?;
        let key = KeyPair::from_seed(seed.trim()).map_err(key_err)?;
        let account = creds_claims(own_creds)?["iss"]
            .as_str()
            .map(String::from)
            .ok_or_else(|| IdentityError::Invalid("credentials name no issuer account".into()))?;
        Ok(HarnessSigner {
            key: std::sync::Arc::new(key),
            account,
        })
    }

    /// The `.creds` text of the harness of `agent_id` in `workspace`.
    pub fn mint(&self, agent_id: &str, workspace: &str) -> Result<String, IdentityError> {
        for (what, v) in [("agent id", agent_id), ("workspace", workspace)] {
            if !access::is_token(v) {
                return Err(IdentityError::Invalid(format!(
                    "{what} {v:?} cannot name a NATS identity (letters, digits, '-' and '_')"
                )));
            }
        }
        let user = KeyPair::new_user();
        // A scoped user carries no permissions of its own: the scope's template applies.
        let nats = json!({
            "type": "user", "version": 2,
            "issuer_account": self.account,
            "tags": [format!("workspace:{workspace}")],
        });
        let jwt = encode(claims(&user.public_key(), agent_id, &self.key, nats), &self.key)?;
        Ok(creds(&jwt, &user.seed().map_err(key_err)?))
    }
}

/// The claims of the user JWT in a `.creds` text (not verified: it is our own).
pub fn creds_claims(creds: &str) -> Result<Value, IdentityError> {
    let jwt = creds
        .lines()
        .skip_while(|l| !l.contains("BEGIN NATS USER JWT"))
        .nth(1)
        .ok_or_else(|| IdentityError::Invalid("no user JWT in the credentials".into()))?;
    let body = jwt
        .split('.')
        .nth(1)
        .ok_or_else(|| IdentityError::Invalid("malformed user JWT".into()))?;
    let bytes = URL_SAFE_NO_PAD
        .decode(body.trim())
        .map_err(|e| IdentityError::Invalid(format!("malformed user JWT: {e}")))?;
    serde_json::from_slice(&bytes).map_err(|e| IdentityError::Invalid(format!("malformed user JWT: {e}")))
}

/// Who a `.creds` text is: (name, workspace tag if any).
pub fn creds_identity(creds: &str) -> Result<(String, Option<String>), IdentityError> {
    let c = creds_claims(creds)?;
    let name = c["name"].as_str().unwrap_or_default().to_string();
    let workspace = c["nats"]["tags"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .find_map(|t| t.strip_prefix("workspace:"))
        .map(String::from);
    Ok((name, workspace))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_minted_harness_names_its_agent_and_workspace() {
        let dir = std::env::temp_dir().join(format!("relay-id-{}", std::process::id()));
        let signer = init(&dir).unwrap().signer().unwrap();
        let minted = signer.mint("a-1", "acme").unwrap();
        assert_eq!(creds_identity(&minted).unwrap(), ("a-1".into(), Some("acme".into())));
        assert!(signer.mint("a.1", "acme").is_err(), "a dot would split the subject");
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn every_identity_fits_the_control_line_the_config_sets_with_room_to_grow() {
        let dir = std::env::temp_dir().join(format!("relay-id-size-{}", std::process::id()));
        let setup = init(&dir).unwrap();
        let conf = std::fs::read_to_string(&setup.server_conf).unwrap();
        assert!(
            conf.contains(&format!("max_control_line: {MAX_CONTROL_LINE}")),
            "{conf}"
        );
        for name in access::identities() {
            let creds = std::fs::read_to_string(setup.creds(name)).unwrap();
            // The CONNECT line carries the JWT and a few hundred bytes more.
            assert!(
                creds.len() * 4 < MAX_CONTROL_LINE,
                "{name}: {} bytes of credentials",
                creds.len()
            );
        }
        let _ = std::fs::remove_dir_all(dir);
    }
}
