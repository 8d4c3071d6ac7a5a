//! A private CA and one server certificate for the mesh's TLS (`relayctl tls init`, the tests):
//! the gateway's HTTPS, the NATS server and a Postgres server can all present it, and every
//! client trusts `ca.pem`. For a cluster with its own PKI (cert-manager, a cloud CA, a managed
//! Postgres' CA bundle) nothing here is needed: point the settings at those files instead.

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair, KeyUsagePurpose,
};
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum PkiError {
    #[error("certificate: {0}")]
    Cert(#[from] rcgen::Error),
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
}

/// The files [`init`] writes.
#[derive(Debug, Clone)]
pub struct Certs {
    pub dir: PathBuf,
    /// The CA certificate every client trusts (`nats.tls_ca_file`, `sslrootcert=`, `--cacert`).
    pub ca: PathBuf,
    /// The CA's private key: only to sign more certificates; keep it offline.
    pub ca_key: PathBuf,
    /// The server certificate (PEM), for every name in `hosts`.
    pub cert: PathBuf,
    pub key: PathBuf,
}

impl Certs {
    pub fn at(dir: &Path) -> Certs {
        Certs {
            dir: dir.to_path_buf(),
            ca: dir.join("ca.pem"),
            ca_key: dir.join("ca.key"),
            cert: dir.join("server.pem"),
            key: dir.join("server.key"),
        }
    }
}

/// How long the server certificate is valid: 397 days, the most browsers accept.
const SERVER_VALIDITY: Duration = Duration::from_secs(397 * 86_400);
const CA_VALIDITY: Duration = Duration::from_secs(10 * 365 * 86_400);

/// A new CA in `dir` and a server certificate for `hosts` (DNS names or IP addresses), valid
/// for server and client authentication (NATS routes present theirs to each other).
pub fn init(dir: &Path, hosts: &[String]) -> Result<Certs, PkiError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| PkiError::Io { path, source }
    };
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let certs = Certs::at(dir);
    let now = time::OffsetDateTime::now_utc();

    let ca_key = KeyPair::generate()?;
    let mut ca = CertificateParams::new(Vec::<String>::new())?;
    ca.distinguished_name.push(DnType::CommonName, "relay-mesh CA");
    ca.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    ca.not_before = now - time::Duration::hours(1);
    ca.not_after = now + CA_VALIDITY;
    let ca_cert = ca.self_signed(&ca_key)?;

    let key = KeyPair::generate()?;
    let mut server = CertificateParams::new(hosts.to_vec())?;
    server
        .distinguished_name
        .push(DnType::CommonName, hosts.first().map_or("relay-mesh", String::as_str));
    server.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    server.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth, ExtendedKeyUsagePurpose::ClientAuth];
    server.not_before = now - time::Duration::hours(1);
    server.not_after = now + SERVER_VALIDITY;
    let cert = server.signed_by(&key, &Issuer::new(ca, &ca_key))?;

    use crate::write_file;
    write_file(&certs.ca, &ca_cert.pem(), 0o644).map_err(io(&certs.ca))?;
    write_file(&certs.ca_key, &ca_key.serialize_pem(), 0o600).map_err(io(&certs.ca_key))?;
    write_file(&certs.cert, &cert.pem(), 0o644).map_err(io(&certs.cert))?;
    write_file(&certs.key, &key.serialize_pem(), 0o600).map_err(io(&certs.key))?;
    Ok(certs)
}
