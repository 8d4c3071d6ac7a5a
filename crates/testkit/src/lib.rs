//! Real infrastructure for tests and benchmarks, no mocks:
//! - [`Nats`]: a private `nats-server` (JetStream on) on a free loopback port, so parallel tests
//!   never see each other's subjects and a test may restart it;
//! - [`Database`]: a fresh database on the local Postgres, dropped afterwards;
//! - [`ServiceProcess`]: a service binary started against both, killable with SIGKILL;
//! - [`Postgres`]: a private Postgres server a test may crash and start again (the chaos run).
//!
//! Environment: `RELAY_NATS_SERVER` (path of nats-server), `RELAY_TEST_PG_ADMIN_URL`
//! (default `postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable`: plain TCP on loopback,
//! as `docker compose` runs it; the TLS path has its own test). Only loopback addresses are used.

use futures::StreamExt;
use relay_contracts::WireError;
use serde::{Serialize, de::DeserializeOwned};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::process::{Child, Command};

pub const CALL_TIMEOUT: Duration = Duration::from_secs(10);

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("no free loopback port")
}

/// A plain HTTP/1.0 GET on loopback: the whole answer, headers included; `None` when nothing
/// answers (no HTTP client to pool or retry: a probe sees the server as it is now).
pub async fn http_get(port: u16, path: &str) -> Option<String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.ok()?;
    let req = format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
    s.write_all(req.as_bytes()).await.ok()?;
    let mut answer = String::new();
    s.read_to_string(&mut answer).await.ok()?;
    Some(answer)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create dir");
    for e in std::fs::read_dir(from).expect("read dir") {
        let e = e.expect("dir entry");
        let target = to.join(e.file_name());
        if e.file_type().expect("file type").is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).expect("copy file");
        }
    }
}

fn scratch_dir(kind: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("relay-{kind}-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

fn nats_server_bin() -> PathBuf {
    if let Ok(p) = std::env::var("RELAY_NATS_SERVER") {
        return p.into();
    }
    for dir in std::env::var("PATH")
        .unwrap_or_default()
        .split(':')
        .chain(["/usr/sbin", "/usr/local/bin", "/usr/bin"])
    {
        let p = Path::new(dir).join("nats-server");
        if p.exists() {
            return p;
        }
    }
    panic!("nats-server not found: install it or set RELAY_NATS_SERVER");
}

/// A private nats-server with JetStream, stopped on drop. Auth is on, as in production: every
/// identity of the mesh has its own credentials ([`Nats::creds`]) and its subject permissions.
pub struct Nats {
    child: Option<Child>,
    pub port: u16,
    pub url: String,
    store: PathBuf,
    /// The identities (`relayctl auth init` into the server's scratch directory); `None` when
    /// started with [`Nats::start_without_auth`].
    pub auth: Option<relay_bus::identity::Setup>,
    /// The server's certificate when it requires TLS ([`Nats::start_tls`]); clients trust its CA.
    pub tls: Option<relay_bus::pki::Certs>,
    /// Its place in a cluster ([`Nats::start_cluster`]).
    cluster: Option<ClusterNode>,
}

/// One node of a test cluster: its name, its route port and every node's route port.
#[derive(Clone)]
struct ClusterNode {
    name: String,
    route_port: u16,
    /// Monitoring (`/routez`).
    http_port: u16,
    routes: Vec<u16>,
}

impl Nats {
    /// With auth on.
    pub async fn start() -> Nats {
        Self::start_with(true, None).await
    }

    /// Anyone may connect and do anything: the mesh as it was before identities.
    pub async fn start_without_auth() -> Nats {
        Self::start_with(false, None).await
    }

    /// With auth on, and TLS required of every client: the server presents `certs.cert`.
    pub async fn start_tls(certs: &relay_bus::pki::Certs) -> Nats {
        Self::start_with(true, Some(certs.clone())).await
    }

    async fn start_with(auth: bool, tls: Option<relay_bus::pki::Certs>) -> Nats {
        // The free port may be taken between probing and binding (tests run in parallel):
        // then our nats-server exits, and we try another port.
        for _ in 0..10 {
            let port = free_port();
            let store = scratch_dir("nats");
            let auth = auth.then(|| relay_bus::identity::init(&store.join("auth")).expect("write NATS identities"));
            let mut nats = Nats {
                child: None,
                port,
                url: format!("nats://127.0.0.1:{port}"),
                store,
                auth,
                tls: tls.clone(),
                cluster: None,
            };
            if nats.spawn().await {
                return nats;
            }
        }
        panic!("could not start nats-server on a free loopback port in 10 attempts");
    }

    /// `n` nodes of one cluster on loopback, auth on, every node with the same identities and
    /// routes to all the others; each node can be killed and started again on its own.
    pub async fn start_cluster(n: usize) -> Vec<Nats> {
        let shared = scratch_dir("nats-cluster-auth");
        relay_bus::identity::init(&shared.join("auth")).expect("write NATS identities");
        let ports: Vec<(u16, u16)> = (0..n).map(|_| (free_port(), free_port())).collect();
        let routes: Vec<u16> = ports.iter().map(|p| p.1).collect();
        let mut nodes = Vec::new();
        for (i, (port, route_port)) in ports.into_iter().enumerate() {
            let store = scratch_dir("nats");
            copy_dir(&shared.join("auth"), &store.join("auth"));
            let auth = relay_bus::identity::Setup::at(&store.join("auth"));
            let mut node = Nats {
                child: None,
                port,
                url: format!("nats://127.0.0.1:{port}"),
                store,
                auth: Some(auth),
                tls: None,
                cluster: Some(ClusterNode {
                    name: format!("n{}", i + 1),
                    route_port,
                    http_port: free_port(),
                    routes: routes.clone(),
                }),
            };
            assert!(node.spawn().await, "cluster node n{} did not start on {port}", i + 1);
            nodes.push(node);
        }
        let _ = std::fs::remove_dir_all(shared);
        for node in &nodes {
            node.wait_routes().await;
        }
        nodes
    }

    /// Waits until this cluster node has a route to every other node: its clients see the
    /// others' subscriptions.
    pub async fn wait_routes(&self) {
        let (port, others) = match &self.cluster {
            Some(c) => (c.http_port, c.routes.len() - 1),
            None => return,
        };
        wait_for(|| async {
            let body = http_get(port, "/routez").await?;
            let json = body.split_once("\r\n\r\n")?.1;
            let routes: serde_json::Value = serde_json::from_str(json).ok()?;
            (routes["num_routes"].as_u64()? as usize == others).then_some(())
        })
        .await
    }

    /// Every node's client URL, comma-separated (`nats.url` for a service of the cluster),
    /// starting with node `first`.
    pub fn cluster_urls(nodes: &[Nats], first: usize) -> String {
        let n = nodes.len();
        (0..n)
            .map(|i| nodes[(first + i) % n].url.clone())
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Starts nats-server on `self.port`; false if it exited instead (the port was taken).
    async fn spawn(&mut self) -> bool {
        let conf = self.store.join("nats.conf");
        let include = if self.auth.is_some() {
            // Include paths are relative to the including file.
            "include \"auth/nats-auth.conf\"\n"
        } else {
            ""
        };
        let tls = match &self.tls {
            Some(c) => format!(
                "tls {{ cert_file: \"{}\", key_file: \"{}\" }}\n",
                c.cert.display(),
                c.key.display()
            ),
            None => String::new(),
        };
        let cluster = match &self.cluster {
            Some(c) => {
                let routes: Vec<String> = c.routes.iter().map(|p| format!("nats-route://127.0.0.1:{p}")).collect();
                format!(
                    "server_name: {}\nhttp: \"127.0.0.1:{}\"\ncluster {{ name: relay, listen: \"127.0.0.1:{}\", routes: [{}] }}\n",
                    c.name,
                    c.http_port,
                    c.route_port,
                    routes.join(", ")
                )
            }
            None => format!("jetstream {{ store_dir: \"{}\" }}\n", self.store.join("js").display()),
        };
        let text = format!("listen: \"127.0.0.1:{}\"\n{cluster}{include}{tls}", self.port);
        std::fs::write(&conf, text).expect("write nats.conf");
        let mut child = Command::new(nats_server_bin())
            .arg("-c")
            .arg(&conf)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("start nats-server");
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            if !matches!(child.try_wait(), Ok(None)) {
                return false;
            }
            if tokio::net::TcpStream::connect(("127.0.0.1", self.port)).await.is_ok() {
                // Listening, but maybe another test's server: ours must still be alive.
                tokio::time::sleep(Duration::from_millis(50)).await;
                if matches!(child.try_wait(), Ok(None)) {
                    self.child = Some(child);
                    return true;
                }
                return false;
            }
            assert!(
                Instant::now() < deadline,
                "nats-server did not listen on 127.0.0.1:{}",
                self.port
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Kills the server and starts it again on the same port and store.
    pub async fn restart(&mut self) {
        self.stop().await;
        self.start_again().await;
    }

    /// Kills the server (kill -9); [`Nats::start_again`] brings it back.
    pub async fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill().await;
        }
    }

    /// Starts the server again on the same port and store.
    pub async fn start_again(&mut self) {
        assert!(
            self.spawn().await,
            "nats-server did not come back on port {}",
            self.port
        );
    }

    /// A client with the `admin` identity (operators' tools: every subject).
    pub async fn client(&self) -> async_nats::Client {
        self.client_as(relay_contracts::access::ADMIN).await
    }

    /// A client with a named identity's credentials and inbox, as that service connects.
    pub async fn client_as(&self, identity: &str) -> async_nats::Client {
        let mut opts = async_nats::ConnectOptions::new();
        if let Some(creds) = self.creds(identity) {
            opts = opts
                .credentials_file(creds)
                .await
                .expect("read test credentials")
                .custom_inbox_prefix(relay_contracts::access::inbox_prefix(identity));
        }
        if let Some(tls) = &self.tls {
            opts = opts.add_root_certificates(tls.ca.clone()).require_tls(true);
        }
        opts.connect(&self.url).await.expect("connect to test nats-server")
    }

    /// The `.creds` file of a named identity (a service, `gateway`, `admin`), with auth on.
    pub fn creds(&self, identity: &str) -> Option<PathBuf> {
        self.auth.as_ref().map(|a| a.creds(identity))
    }

    /// The `.creds` text of a harness for `agent_id` in `workspace`, minted as the spawner does.
    pub fn harness_creds(&self, agent_id: &str, workspace: &str) -> Option<String> {
        let signer = self.auth.as_ref()?.signer().expect("harness signer");
        Some(signer.mint(agent_id, workspace).expect("mint harness identity"))
    }

    /// The environment a process needs to connect as `identity` (nothing with auth off). The
    /// spawner also gets the harness signer; a harness gets a fresh agent identity.
    pub fn env_for(&self, identity: &str) -> Vec<(String, String)> {
        let mut env = self.env_for_identity(identity);
        if let Some(tls) = &self.tls {
            env.push(("RELAY_NATS__TLS_CA_FILE".into(), tls.ca.display().to_string()));
        }
        env
    }

    fn env_for_identity(&self, identity: &str) -> Vec<(String, String)> {
        let Some(auth) = &self.auth else {
            return Vec::new();
        };
        match identity {
            "agent-harness" | "fake-agent" => {
                let agent = uuid::Uuid::new_v4().simple().to_string();
                let creds = self.harness_creds(&agent, relay_contracts::context::DEFAULT_WORKSPACE);
                vec![("RELAY_NATS__CREDS".into(), creds.unwrap_or_default())]
            }
            _ => {
                let mut env = vec![(
                    "RELAY_NATS__CREDS_FILE".into(),
                    auth.creds(identity).display().to_string(),
                )];
                if identity == "agent-spawner" {
                    env.push((
                        "RELAY_SPAWNER__HARNESS_SIGNER".into(),
                        auth.harness_signer.display().to_string(),
                    ));
                }
                env
            }
        }
    }
}

impl Drop for Nats {
    fn drop(&mut self) {
        if let Some(c) = &mut self.child {
            let _ = c.start_kill();
        }
        let _ = std::fs::remove_dir_all(&self.store);
    }
}

/// A fresh database, dropped (with its connections) when this value is dropped.
pub struct Database {
    pub name: String,
    pub url: String,
    admin_url: String,
}

impl Database {
    pub async fn create() -> Database {
        let admin_url = std::env::var("RELAY_TEST_PG_ADMIN_URL")
            // The machine's Postgres has `ssl = on`, and libpq's default (`prefer`) would encrypt
            // every test's and bench's loopback connection (a third of select throughput).
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable".into());
        Self::create_on(&admin_url).await
    }

    /// A fresh database on the server `admin_url` points at (e.g. a private [`Postgres`]).
    pub async fn create_on(admin_url: &str) -> Database {
        use sqlx::Connection;
        let admin_url = admin_url.to_string();
        let name = format!("relay_t_{}", uuid::Uuid::new_v4().simple());
        let mut admin = sqlx::PgConnection::connect(&admin_url)
            .await
            .expect("connect to Postgres as admin");
        sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
            .execute(&mut admin)
            .await
            .expect("create test database");
        // postgres://host/db?params: the same server and params, another database.
        let (path, params) = admin_url
            .split_once('?')
            .map_or((admin_url.as_str(), None), |(p, q)| (p, Some(q)));
        let base = path.rsplit_once('/').map_or(path, |(b, _)| b);
        let params = params.map(|q| format!("?{q}")).unwrap_or_default();
        Database {
            url: format!("{base}/{name}{params}"),
            name,
            admin_url,
        }
    }

    /// A pool with the same session settings as the services'.
    pub async fn pool(&self) -> sqlx::PgPool {
        let options = relay_bus::db::connect_options(&self.url).expect("test database url");
        sqlx::PgPool::connect_with(options)
            .await
            .expect("connect to test database")
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        // Drop runs outside any runtime guarantee; psql is the simplest synchronous client.
        let _ = std::process::Command::new("psql")
            .args([
                &self.admin_url,
                "-qc",
                &format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// A private PostgreSQL server: `initdb` in a scratch directory, trust auth, loopback only,
/// removed on drop. [`Postgres::stop`] is an immediate shutdown (no checkpoint, recovery from the
/// WAL on start), as close to a crash as the server allows.
pub struct Postgres {
    pub port: u16,
    /// `postgres://postgres@127.0.0.1:<port>/postgres`, for [`Database::create_on`].
    pub admin_url: String,
    dir: PathBuf,
    bin: PathBuf,
    running: bool,
}

impl Postgres {
    pub async fn start() -> Postgres {
        Self::start_with(None, &[]).await
    }

    /// With `pg_stat_statements` loaded, for a bench's [`SqlProfile`]: otherwise as
    /// [`Postgres::start`] (the same durability: fsync and synchronous commit on).
    pub async fn start_profiled() -> Postgres {
        let settings = [
            "shared_preload_libraries = 'pg_stat_statements'",
            // Planning is CPU spent per statement too: a statement planned on every run shows.
            "pg_stat_statements.track_planning = on",
        ];
        Self::start_with(None, &settings).await
    }

    /// With TLS on and required: the server presents `certs.cert`, accepts TCP connections only
    /// over TLS (`hostssl` is its only TCP rule), and [`Postgres::admin_url`] asks for
    /// `sslmode=verify-full` against `certs.ca`.
    pub async fn start_tls(certs: &relay_bus::pki::Certs) -> Postgres {
        Self::start_with(Some(certs), &[]).await
    }

    /// A scratch directory (the server's own) and a free port; no data directory yet.
    async fn unstarted(url_params: &str) -> Postgres {
        let port = free_port();
        let pg = Postgres {
            port,
            admin_url: format!("postgres://postgres@127.0.0.1:{port}/postgres{url_params}"),
            bin: pg_bin_dir(),
            dir: scratch_dir("pg"),
            running: false,
        };
        give_to_postgres(&[&pg.dir]).await;
        pg
    }

    async fn start_with(tls: Option<&relay_bus::pki::Certs>, settings: &[&str]) -> Postgres {
        let params = tls.map_or(String::new(), |c| {
            format!("?sslmode=verify-full&sslrootcert={}", c.ca.display())
        });
        let mut pg = Self::unstarted(&params).await;
        let data = pg.dir.join("data");
        let mut init = pg.command("initdb");
        init.arg("-D")
            .arg(&data)
            .args(["-A", "trust", "-U", "postgres", "--no-sync"])
            .stdout(Stdio::null());
        let init = Command::from(init).status().await;
        assert!(init.is_ok_and(|s| s.success()), "initdb in {}", data.display());
        if let Some(certs) = tls {
            pg.require_tls(certs).await;
        }
        if !settings.is_empty() {
            let conf = data.join("postgresql.conf");
            let mut text = std::fs::read_to_string(&conf).expect("read postgresql.conf");
            text.push_str(&format!("\n{}\n", settings.join("\n")));
            std::fs::write(&conf, text).expect("write postgresql.conf");
        }
        pg.start_again().await;
        pg
    }

    /// A streaming replica of `primary` (`pg_basebackup -R`, WAL streamed), started on a port of
    /// its own: a read-only standby until [`Postgres::promote`], as a failover replica is.
    pub async fn standby_of(primary: &Postgres) -> Postgres {
        let mut pg = Self::unstarted("").await;
        let mut backup = pg.command("pg_basebackup");
        backup
            .args(["-h", "127.0.0.1", "-p", &primary.port.to_string()])
            .args(["-U", "postgres", "-R", "-X", "stream", "-c", "fast", "--no-sync", "-D"])
            .arg(pg.dir.join("data"))
            .stdout(Stdio::null());
        let ok = Command::from(backup).status().await;
        assert!(
            ok.is_ok_and(|s| s.success()),
            "pg_basebackup from port {}",
            primary.port
        );
        pg.start_again().await;
        pg
    }

    /// Waits until this standby has replayed all that `primary` has written so far: with
    /// asynchronous replication a commit is acknowledged before the standby has it, so a test
    /// that stops the standby right after a write must first wait for it here.
    pub async fn wait_replayed(&self, primary: &Postgres) {
        use sqlx::Connection;
        let mut p = sqlx::PgConnection::connect(&primary.admin_url)
            .await
            .expect("connect to the primary");
        let written: String = sqlx::query_scalar("SELECT pg_current_wal_lsn()::text")
            .fetch_one(&mut p)
            .await
            .expect("the primary's WAL position");
        let standby = self.admin_url.clone();
        wait_for_within(Duration::from_secs(30), || {
            let (standby, written) = (standby.clone(), written.clone());
            async move {
                let mut c = sqlx::PgConnection::connect(&standby).await.ok()?;
                let replayed: bool =
                    sqlx::query_scalar("SELECT coalesce(pg_last_wal_replay_lsn() >= $1::pg_lsn, false)")
                        .bind(&written)
                        .fetch_one(&mut c)
                        .await
                        .ok()?;
                replayed.then_some(())
            }
        })
        .await;
    }

    /// `pg_ctl promote`: the standby leaves recovery and takes writes, as in a failover.
    pub async fn promote(&self) {
        let ok = Command::from(self.pg_ctl(&["-w", "promote"])).status().await;
        assert!(ok.is_ok_and(|s| s.success()), "pg_ctl promote");
    }

    /// Replication on this primary: `synchronous` makes every commit wait until a standby has
    /// written it (`synchronous_standby_names = '*'`, `synchronous_commit = on`), so a commit
    /// acknowledged before a failover is on the promoted standby; otherwise the default,
    /// asynchronous. Applied by a reload, at once.
    pub async fn set_synchronous(&self, synchronous: bool) {
        use sqlx::Connection;
        let names = if synchronous { "*" } else { "" };
        let mut c = sqlx::PgConnection::connect(&self.admin_url)
            .await
            .expect("connect to the primary");
        for sql in [
            format!("ALTER SYSTEM SET synchronous_standby_names = '{names}'"),
            "ALTER SYSTEM SET synchronous_commit = 'on'".into(),
            "SELECT pg_reload_conf()".into(),
        ] {
            sqlx::query(sqlx::AssertSqlSafe(sql))
                .execute(&mut c)
                .await
                .expect("set replication mode");
        }
    }

    /// The certificate and key in the data directory (the server insists the key is its own,
    /// mode 0600), `ssl = on`, and no TCP rule but `hostssl`.
    async fn require_tls(&self, certs: &relay_bus::pki::Certs) {
        let data = self.dir.join("data");
        std::fs::copy(&certs.cert, data.join("server.crt")).expect("copy server certificate");
        std::fs::copy(&certs.key, data.join("server.key")).expect("copy server key");
        give_to_postgres(&[&data.join("server.crt"), &data.join("server.key")]).await;
        let conf = data.join("postgresql.conf");
        let mut text = std::fs::read_to_string(&conf).expect("read postgresql.conf");
        text.push_str("\nssl = on\nssl_cert_file = 'server.crt'\nssl_key_file = 'server.key'\n");
        std::fs::write(&conf, text).expect("write postgresql.conf");
        let hba = "local all all trust\nhostssl all all 127.0.0.1/32 trust\n";
        std::fs::write(data.join("pg_hba.conf"), hba).expect("write pg_hba.conf");
    }

    /// A command from the server's bin dir, run as `postgres` when we are root. Synchronous, so
    /// that drop can use it too; `Command::from` makes it async.
    fn command(&self, tool: &str) -> std::process::Command {
        let exe = self.bin.join(tool);
        if as_root() {
            let mut c = std::process::Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(exe);
            c
        } else {
            std::process::Command::new(exe)
        }
    }

    fn pg_ctl(&self, args: &[&str]) -> std::process::Command {
        let mut c = self.command("pg_ctl");
        c.arg("-D")
            .arg(self.dir.join("data"))
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        c
    }

    /// `pg_ctl stop -m immediate`: every backend is dropped at once, like a crash.
    pub async fn stop(&mut self) {
        let ok = Command::from(self.pg_ctl(&["-w", "-m", "immediate", "stop"]))
            .status()
            .await;
        assert!(ok.is_ok_and(|s| s.success()), "pg_ctl stop");
        self.running = false;
    }

    /// Starts the server on the same port and data directory, and waits until it accepts.
    pub async fn start_again(&mut self) {
        let opts = format!(
            "-p {} -c listen_addresses=127.0.0.1 -k {}",
            self.port,
            self.dir.display()
        );
        let log = self.dir.join("server.log");
        let start = self.pg_ctl(&["-w", "-t", "60", "-o", &opts, "-l", log.to_str().unwrap(), "start"]);
        let ok = Command::from(start).status().await;
        assert!(ok.is_ok_and(|s| s.success()), "pg_ctl start; see {}", log.display());
        self.running = true;
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        if self.running {
            let _ = self.pg_ctl(&["-w", "-m", "immediate", "stop"]).status();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// One address that follows the primary, as production setups have (HAProxy in front of a
/// Patroni cluster, a managed database's endpoint): Debian's HAProxy in TCP mode over the given
/// servers, each checked every 200 ms with `SELECT pg_is_in_recovery()`; only a server that
/// answers `f` (a primary) takes connections, and the connections of a server that stops being
/// one (two checks in a row, each given 2 s) are cut. One slow check on a loaded machine (a
/// psql that took over 200 ms to start) is not a failover: it cut a migration mid-way once.
/// Stopped on drop.
pub struct PrimaryProxy {
    pub port: u16,
    /// `postgres://postgres@127.0.0.1:<port>/postgres`, for [`Database::create_on`].
    pub admin_url: String,
    child: Child,
    dir: PathBuf,
}

impl PrimaryProxy {
    /// Starts HAProxy over `servers` and waits until it reaches a primary through it.
    pub async fn start(servers: &[&Postgres]) -> PrimaryProxy {
        let port = free_port();
        let dir = scratch_dir("haproxy");
        let psql = pg_bin_dir().join("psql");
        // HAProxy runs it with the server's address and port as its 3rd and 4th arguments.
        let check = dir.join("is-primary.sh");
        std::fs::write(
            &check,
            format!(
                "#!/bin/sh\n[ \"$({} -h \"$3\" -p \"$4\" -U postgres -d postgres -XAtc 'SELECT pg_is_in_recovery()' 2>/dev/null)\" = f ]\n",
                psql.display()
            ),
        )
        .expect("write the check script");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&check, std::fs::Permissions::from_mode(0o755)).expect("chmod the check");
        let servers: String = servers
            .iter()
            .enumerate()
            .map(|(i, pg)| format!("  server pg{i} 127.0.0.1:{} check\n", pg.port))
            .collect();
        let conf = format!(
            "global\n  external-check\n  insecure-fork-wanted\n  stats socket {}/admin.sock\n\
             defaults\n  mode tcp\n  timeout connect 1s\n  timeout client 1h\n  timeout server 1h\n  timeout check 2s\n\
             listen postgres\n  bind 127.0.0.1:{port}\n  option external-check\n  external-check command {}\n\
             \x20 default-server inter 200ms fall 2 rise 1 on-marked-down shutdown-sessions\n{servers}",
            dir.display(),
            check.display()
        );
        std::fs::write(dir.join("haproxy.cfg"), conf).expect("write haproxy.cfg");
        let log = std::fs::File::create(dir.join("haproxy.log")).expect("haproxy log");
        let child = Command::new(haproxy_bin())
            .args(["-db", "-f"])
            .arg(dir.join("haproxy.cfg"))
            .stdout(log.try_clone().expect("haproxy log"))
            .stderr(log)
            .kill_on_drop(true)
            .spawn()
            .expect("start haproxy");
        let proxy = PrimaryProxy {
            port,
            admin_url: format!("postgres://postgres@127.0.0.1:{port}/postgres"),
            child,
            dir,
        };
        proxy.wait_for_primary().await;
        proxy
    }

    /// Waits until HAProxy routes to one server only (it takes every server as up until its
    /// first check) and a connection through it reaches a primary.
    pub async fn wait_for_primary(&self) {
        use sqlx::Connection;
        let url = self.admin_url.clone();
        wait_for_within(Duration::from_secs(60), || {
            let url = url.clone();
            async move {
                if self.servers_up().await? != 1 {
                    return None;
                }
                let mut c = sqlx::PgConnection::connect(&url).await.ok()?;
                let standby: bool = sqlx::query_scalar("SELECT pg_is_in_recovery()")
                    .fetch_one(&mut c)
                    .await
                    .ok()?;
                (!standby).then_some(())
            }
        })
        .await;
    }

    /// How many servers HAProxy routes to, from its stats socket (`show stat`, CSV).
    async fn servers_up(&self) -> Option<usize> {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut sock = tokio::net::UnixStream::connect(self.dir.join("admin.sock"))
            .await
            .ok()?;
        sock.write_all(b"show stat\n").await.ok()?;
        let mut csv = String::new();
        sock.read_to_string(&mut csv).await.ok()?;
        let up = csv
            .lines()
            .map(|l| l.split(',').collect::<Vec<_>>())
            .filter(|f| f.len() > 17 && f[0] == "postgres" && f[1].starts_with("pg"))
            .filter(|f| f[17].starts_with("UP"))
            .count();
        Some(up)
    }
}

impl Drop for PrimaryProxy {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Debian's haproxy (`apt-get install haproxy`; `make pg-proxy` does), or `RELAY_HAPROXY`.
fn haproxy_bin() -> PathBuf {
    if let Ok(p) = std::env::var("RELAY_HAPROXY") {
        return p.into();
    }
    ["/usr/sbin/haproxy", "/usr/bin/haproxy", "/usr/local/sbin/haproxy"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
        .expect("haproxy not found: `make pg-proxy` installs it (Debian's package), or set RELAY_HAPROXY")
}

/// When we are root, hands `paths` to the `postgres` user: the server refuses to run as root,
/// and its files (its key above all) must be its own.
async fn give_to_postgres(paths: &[&Path]) {
    if !as_root() {
        return;
    }
    let ok = Command::new("chown").arg("postgres:").args(paths).status().await;
    assert!(ok.is_ok_and(|s| s.success()), "chown {paths:?} to postgres");
}

fn as_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// The newest server under /usr/lib/postgresql (Debian's layout), or `RELAY_PG_BIN`.
fn pg_bin_dir() -> PathBuf {
    if let Ok(p) = std::env::var("RELAY_PG_BIN") {
        return p.into();
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path().join("bin"))))
        .filter(|(_, bin)| bin.join("initdb").exists())
        .collect();
    versions.sort();
    versions
        .pop()
        .map(|(_, bin)| bin)
        .expect("no PostgreSQL server under /usr/lib/postgresql: install it or set RELAY_PG_BIN")
}

/// A service binary running against a test NATS and database. Logs go to a file whose path is
/// printed, so a failing test can be read afterwards.
pub struct ServiceProcess {
    child: Child,
    pub log: PathBuf,
}

impl ServiceProcess {
    pub fn spawn(bin: &str, nats: &Nats, db: &Database, extra_env: &[(&str, &str)]) -> ServiceProcess {
        Self::spawn_with_args(bin, &[], nats, db, extra_env)
    }

    /// Like [`ServiceProcess::spawn`], with command-line arguments.
    pub fn spawn_with_args(
        bin: &str,
        args: &[&str],
        nats: &Nats,
        db: &Database,
        extra_env: &[(&str, &str)],
    ) -> ServiceProcess {
        let log_dir = std::env::temp_dir().join("relay-test-logs");
        std::fs::create_dir_all(&log_dir).expect("log dir");
        let name = Path::new(bin).file_name().and_then(|n| n.to_str()).unwrap_or("service");
        let log = log_dir.join(format!("{name}-{}.log", uuid::Uuid::new_v4().simple()));
        let file = std::fs::File::create(&log).expect("log file");
        let mut cmd = Command::new(bin);
        let identity = match name {
            "relayctl" => relay_contracts::access::ADMIN,
            other => other,
        };
        cmd.args(args)
            .envs(nats.env_for(identity))
            .env("RELAY_NATS__URL", &nats.url)
            .env("RELAY_DATABASE__URL", &db.url)
            .env("RELAY_DATABASE__MAX_CONNECTIONS", "8")
            .env_remove("RELAY_CONFIG")
            .stdout(file.try_clone().expect("log file"))
            .stderr(file)
            .kill_on_drop(true);
        for (k, v) in extra_env {
            cmd.env(k, v);
        }
        let child = cmd.spawn().unwrap_or_else(|e| panic!("start {bin}: {e}"));
        eprintln!("{name} log: {}", log.display());
        ServiceProcess { child, log }
    }

    pub fn pid(&self) -> u32 {
        self.child.id().unwrap_or_default()
    }

    /// SIGKILL: no shutdown hook runs, as when a machine dies.
    pub async fn kill9(&mut self) {
        let _ = self.child.kill().await;
    }

    /// Waits for the process to exit on its own; Some(success) or None on timeout.
    pub async fn wait_exit(&mut self, within: Duration) -> Option<bool> {
        match tokio::time::timeout(within, self.child.wait()).await {
            Ok(Ok(status)) => Some(status.success()),
            _ => None,
        }
    }

    /// SIGTERM and wait for a clean exit; returns whether it exited successfully.
    pub async fn terminate(&mut self) -> bool {
        let _ = std::process::Command::new("kill")
            .args(["-TERM", &self.pid().to_string()])
            .status();
        match tokio::time::timeout(Duration::from_secs(15), self.child.wait()).await {
            Ok(Ok(status)) => status.success(),
            _ => false,
        }
    }
}

/// Resident memory of a process, KiB (0 once it is gone).
pub fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// CPU seconds (user + system) each live process on this machine has used so far, by pid, with
/// its program name (`/proc/<pid>/stat`'s comm: `session-registr`, `postgres`, …).
pub struct CpuReading(std::collections::HashMap<u32, (String, f64)>);

/// Reads every process's CPU time; [`CpuReading::used_since`] says where a bench's CPU went.
pub fn cpu_reading() -> CpuReading {
    // Linux reports them in USER_HZ, which is 100 on every architecture it runs on.
    let hz = 100.0;
    let mut out = std::collections::HashMap::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return CpuReading(out);
    };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid …`: comm may hold spaces, so split after its closing paren.
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let comm = stat[open + 1..close].to_string();
        let fields: Vec<&str> = stat[close + 2..].split_whitespace().collect();
        let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok()).unwrap_or(0.0);
        // utime and stime are fields 14 and 15 of stat, 11 and 12 after the comm.
        out.insert(pid, (comm, (ticks(11) + ticks(12)) / hz));
    }
    CpuReading(out)
}

/// ms of CPU per message of `messages` by program, from [`CpuReading::used_since`]: the largest
/// first, programs under 0.05 ms left out.
pub fn cpu_ms_per_message(used: &std::collections::BTreeMap<String, f64>, messages: usize) -> Vec<(String, f64)> {
    let mut cpu: Vec<(String, f64)> = used
        .iter()
        .map(|(name, used)| (name.clone(), used * 1000.0 / messages.max(1) as f64))
        .filter(|(_, ms)| *ms >= 0.05)
        .collect();
    cpu.sort_by(|a, b| b.1.total_cmp(&a.1));
    cpu
}

impl CpuReading {
    /// CPU seconds used since `before`, summed by program name, per process: a process counts
    /// from `before` (or from its start), under its name now (a kernel worker renames itself
    /// with its work), and one that ended meanwhile drops out.
    pub fn used_since(&self, before: &CpuReading) -> std::collections::BTreeMap<String, f64> {
        let mut out = std::collections::BTreeMap::new();
        for (pid, (comm, secs)) in &self.0 {
            let was = before.0.get(pid).map_or(0.0, |(_, s)| *s);
            *out.entry(comm.clone()).or_insert(0.0) += (secs - was).max(0.0);
        }
        out
    }
}

/// Polls `f` every 50 ms until it gives a value; panics after 20 s. For state that another
/// process changes (a fold, a PTY, an expiry), where the test can only look again.
pub async fn wait_for<T, F: std::future::Future<Output = Option<T>>>(f: impl FnMut() -> F) -> T {
    wait_for_within(Duration::from_secs(20), f).await
}

/// [`wait_for`] with another limit.
pub async fn wait_for_within<T, F: std::future::Future<Output = Option<T>>>(
    within: Duration,
    mut f: impl FnMut() -> F,
) -> T {
    let deadline = Instant::now() + within;
    loop {
        if let Some(v) = f().await {
            return v;
        }
        assert!(Instant::now() < deadline, "condition not met in {within:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits until `n` instances of micro service `name` serve every endpoint ([`instances`]).
pub async fn wait_for_instances(client: &async_nats::Client, name: &str, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let found = instances(client, name, n).await.len();
        if found >= n {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "only {found} of {n} {name} instances serve all their endpoints ($SRV.INFO)"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Replies of instances of `name` to `$SRV.<verb>.<name>`: waits up to 5 s for `expect` of
/// them, then 100 ms more for any others.
pub async fn micro_replies(
    client: &async_nats::Client,
    verb: &str,
    name: &str,
    expect: usize,
) -> Vec<serde_json::Value> {
    micro_replies_within(client, verb, name, expect, Duration::from_secs(5)).await
}

async fn micro_replies_within(
    client: &async_nats::Client,
    verb: &str,
    name: &str,
    expect: usize,
    patience: Duration,
) -> Vec<serde_json::Value> {
    let inbox = client.new_inbox();
    let mut sub = client.subscribe(inbox.clone()).await.expect("subscribe");
    client
        .publish_with_reply(format!("$SRV.{verb}.{name}"), inbox, "".into())
        .await
        .expect("publish");
    let mut out = Vec::new();
    let deadline = Instant::now() + patience;
    loop {
        let wait = if out.len() >= expect {
            Duration::from_millis(100)
        } else {
            deadline.saturating_duration_since(Instant::now())
        };
        match tokio::time::timeout(wait, sub.next()).await {
            Ok(Some(m)) => out.extend(serde_json::from_slice::<serde_json::Value>(&m.payload)),
            _ => break,
        }
    }
    out
}

/// The six services behind the bus, by binary and micro-service name (the same here).
pub const BUS_SERVICES: [&str; 6] = [
    "session-registry",
    "event-ingest",
    "delivery-runner",
    "permission-manager",
    "cost-aggregator",
    "coordination",
];

/// Waits until NATS has dropped every subscriber of `subject`, after the processes serving it
/// were stopped: the server notices a closed connection a moment later, and a request sent in
/// between goes to the gone subscriber and times out instead of failing with "no responders".
pub async fn wait_until_unserved(client: &async_nats::Client, subject: &str) {
    wait_for(|| async {
        let asked = tokio::time::timeout(
            Duration::from_millis(300),
            client.request(subject.to_string(), "".into()),
        );
        match asked.await {
            Ok(Err(e)) if e.kind() == async_nats::RequestErrorKind::NoResponders => Some(()),
            _ => None,
        }
    })
    .await
}

/// Ids of the instances of `name` that serve every endpoint they will (waiting for up to
/// `expect`): their `$SRV.INFO` lists as many endpoints as their metadata announces. An
/// instance answers `$SRV.PING` as soon as it registers, before its endpoints are added, so a
/// `PING` alone would let a caller in too early.
pub async fn instances(client: &async_nats::Client, name: &str, expect: usize) -> HashSet<String> {
    // Short: callers poll this while services start.
    micro_replies_within(client, "INFO", name, expect, Duration::from_millis(300))
        .await
        .into_iter()
        .filter(serves_all_endpoints)
        .filter_map(|v| v["id"].as_str().map(String::from))
        .collect()
}

fn serves_all_endpoints(info: &serde_json::Value) -> bool {
    let listed = info["endpoints"].as_array().map_or(0, Vec::len);
    let announced = info["metadata"][relay_bus::service::ENDPOINTS_METADATA]
        .as_str()
        .and_then(|n| n.parse::<usize>().ok());
    announced.is_some_and(|n| listed >= n)
}

/// A typed request, as another service would make it.
pub async fn call<Req: Serialize, Resp: DeserializeOwned>(
    client: &async_nats::Client,
    subject: &str,
    req: &Req,
) -> Result<Resp, WireError> {
    relay_bus::client::request(client, subject, req, CALL_TIMEOUT).await
}

/// A call as the gateway makes it for an API key: the gateway's NATS identity, the key's caller
/// (`operator:<keyId>`, `admin:<keyId>`, …) and workspace in the headers; the reply as JSON,
/// error or not.
pub async fn call_as_key(
    nats: &Nats,
    caller: &str,
    workspace: &str,
    subject: &str,
    body: serde_json::Value,
) -> serde_json::Value {
    let gateway = nats.client_as(relay_contracts::access::GATEWAY).await;
    let mut headers = async_nats::HeaderMap::new();
    headers.insert(relay_contracts::context::CALLER_HEADER, caller);
    headers.insert(relay_contracts::context::WORKSPACE_HEADER, workspace);
    let reply = tokio::time::timeout(
        CALL_TIMEOUT,
        gateway.request_with_headers(subject.to_string(), headers, serde_json::to_vec(&body).unwrap().into()),
    )
    .await
    .unwrap_or_else(|_| panic!("{subject} as {caller} timed out"))
    .unwrap_or_else(|e| panic!("{subject} as {caller}: {e}"));
    serde_json::from_slice(&reply.payload).unwrap()
}

/// A raw JSON request; the reply body decoded as JSON whatever it is.
pub async fn call_json(
    client: &async_nats::Client,
    subject: &str,
    body: serde_json::Value,
) -> Result<serde_json::Value, WireError> {
    call(client, subject, &body).await
}

/// The browser for the console's tests and bench: Debian's chromium (`RELAY_CHROMIUM`) and the
/// playwright-core that `scripts/install-console-deps.sh` put in its cache (`RELAY_CONSOLE_E2E`).
pub fn console_browser() -> (String, PathBuf) {
    let chromium = std::env::var("RELAY_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    assert!(
        Path::new(&chromium).exists(),
        "{chromium} is missing: run `make console-deps`"
    );
    let cache = std::env::var_os("RELAY_CONSOLE_E2E").map_or_else(
        || PathBuf::from(std::env::var("HOME").unwrap()).join(".cache/relay-mesh/console-e2e"),
        PathBuf::from,
    );
    let dir = cache.join("playwright-core-1.65.1");
    assert!(
        dir.join(".installed").exists(),
        "{} is missing: run `make console-deps` (scripts/install-console-deps.sh)",
        dir.display()
    );
    (chromium, dir)
}

/// A Python with `packages` (pinned, from PyPI), for tests that check the mesh with another
/// ecosystem's official library: a venv in `~/.cache/relay-mesh/py/<name>`, made once (built
/// aside and renamed into place, so tests running at once never see half of one).
pub fn python_venv(name: &str, packages: &[&str]) -> PathBuf {
    let home = PathBuf::from(std::env::var("HOME").unwrap());
    let dir = home.join(".cache/relay-mesh/py").join(name);
    let python = dir.join("bin/python");
    if python.exists() {
        return python;
    }
    std::fs::create_dir_all(dir.parent().unwrap()).unwrap();
    // Tests of one process run at once: the pid alone would be shared.
    let building = dir.with_extension(format!(
        "building-{}-{}",
        std::process::id(),
        uuid::Uuid::new_v4().simple()
    ));
    let _ = std::fs::remove_dir_all(&building);
    let ok = std::process::Command::new("python3")
        .args(["-m", "venv"])
        .arg(&building)
        .status()
        .is_ok_and(|s| s.success())
        && std::process::Command::new(building.join("bin/pip"))
            .args(["install", "-q"])
            .args(packages)
            .status()
            .is_ok_and(|s| s.success());
    assert!(ok, "cannot install {packages:?} from PyPI into {}", building.display());
    // venv scripts name their own directory; a venv moved after creation still runs
    // `bin/python` (what the tests use).
    if std::fs::rename(&building, &dir).is_err() {
        // Another test made it first.
        let _ = std::fs::remove_dir_all(&building);
    }
    python
}

/// A webhook receiver on a free loopback port that checks every post with the official
/// Standard Webhooks library for Python (`standardwebhooks` from PyPI, not relay-mesh's code):
/// `py/webhook_receiver.py`. Each post is a JSON line (`id`, `valid`, `type`, `seq`,
/// `sessionId`, `status`); it answers 503 while set down, else 204.
pub struct WebhookReceiver {
    _child: Child,
    pub url: String,
    out: PathBuf,
    down: PathBuf,
}

impl WebhookReceiver {
    pub async fn start(secret: &str) -> WebhookReceiver {
        let python = python_venv("standardwebhooks-1.1.0", &["standardwebhooks==1.1.0"]);
        let dir = std::env::temp_dir().join(format!("webhook-receiver-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).unwrap();
        let (port_file, out, down) = (dir.join("port"), dir.join("posts.jsonl"), dir.join("down"));
        let child = Command::new(python)
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/py/webhook_receiver.py"))
            .args([&port_file, &out, &down])
            .arg(secret)
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let port = wait_for(|| async { std::fs::read_to_string(&port_file).ok() }).await;
        WebhookReceiver {
            _child: child,
            url: format!("http://127.0.0.1:{port}/hook"),
            out,
            down,
        }
    }

    /// Every post so far, in the order received.
    pub fn posts(&self) -> Vec<serde_json::Value> {
        std::fs::read_to_string(&self.out)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    pub fn set_down(&self, down: bool) {
        if down {
            std::fs::write(&self.down, "").unwrap();
        } else {
            let _ = std::fs::remove_file(&self.down);
        }
    }
}

/// The path of another workspace binary, built next to the running test executable
/// (`target/<profile>/<name>`). `make test` builds every binary first.
pub fn bin_path(name: &str) -> String {
    let exe = std::env::current_exe().expect("current test executable");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps/<test>");
    let path = profile_dir.join(name);
    assert!(
        path.exists(),
        "{} is not built: run `cargo build --workspace` first",
        path.display()
    );
    path.to_string_lossy().into_owned()
}

/// A call that must succeed; panics naming the subject, request and error otherwise.
pub async fn expect_ok(client: &async_nats::Client, subject: &str, body: serde_json::Value) -> serde_json::Value {
    match call_json(client, subject, body.clone()).await {
        Ok(v) => v,
        Err(e) => panic!("{subject} {body} failed: {e}"),
    }
}

/// A call that must fail with `code`; returns the error for further checks.
pub async fn expect_err(client: &async_nats::Client, subject: &str, body: serde_json::Value, code: &str) -> WireError {
    match call_json(client, subject, body.clone()).await {
        Ok(v) => panic!("{subject} {body} succeeded with {v}, expected {code}"),
        Err(e) => {
            assert_eq!(e.code().as_str(), code, "{subject} {body}: {e}");
            e
        }
    }
}

/// A service under test: a private nats-server, a fresh database and `n` replicas of one
/// binary, all serving, plus a client to call them with.
pub struct Cluster {
    pub nats: Nats,
    pub db: Database,
    pub replicas: Vec<ServiceProcess>,
    pub client: async_nats::Client,
    bin: String,
    service: &'static str,
    env: Vec<(String, String)>,
}

impl Cluster {
    /// `service` is the micro service name the binary registers (for `$SRV.PING`); `env` is
    /// given to every replica.
    pub async fn start(bin: &str, service: &'static str, n: usize, env: &[(&str, &str)]) -> Cluster {
        let nats = Nats::start().await;
        let db = Database::create().await;
        let client = nats.client().await;
        let env = env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let mut cluster = Cluster {
            nats,
            db,
            replicas: Vec::new(),
            client,
            bin: bin.to_string(),
            service,
            env,
        };
        for _ in 0..n {
            cluster.add_replica().await;
        }
        cluster
    }

    /// Starts one more replica and waits until every replica in `replicas` answers.
    pub async fn add_replica(&mut self) {
        let env: Vec<(&str, &str)> = self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        self.replicas
            .push(ServiceProcess::spawn(&self.bin, &self.nats, &self.db, &env));
        wait_for_instances(&self.client, self.service, self.replicas.len()).await;
    }

    /// Replaces the first replica (already killed) with a fresh one.
    pub async fn replace_first_replica(&mut self) {
        self.replicas.remove(0);
        self.add_replica().await;
    }

    pub async fn call(&self, subject: &str, body: serde_json::Value) -> Result<serde_json::Value, WireError> {
        call_json(&self.client, subject, body).await
    }

    /// A call that must succeed.
    pub async fn ok(&self, subject: &str, body: serde_json::Value) -> serde_json::Value {
        expect_ok(&self.client, subject, body).await
    }

    /// A call that must fail with `code`; returns the error.
    pub async fn err(&self, subject: &str, body: serde_json::Value, code: &str) -> WireError {
        expect_err(&self.client, subject, body, code).await
    }

    /// A new session's id.
    pub async fn new_session(&self) -> String {
        self.ok("session.create", serde_json::json!({})).await["sessionId"]
            .as_str()
            .unwrap()
            .to_string()
    }

    /// Attaches an agent of adapter `claude` with `handle` and `capabilities` to `session`; its id.
    pub async fn attach_agent(&self, session: &str, handle: &str, capabilities: serde_json::Value) -> String {
        let body = serde_json::json!({"sessionId": session, "agent": {"kind": "adapter", "adapterName": "claude"},
                                      "handle": handle, "capabilities": capabilities});
        self.ok("session.agent.attach", body).await["agentId"]
            .as_str()
            .unwrap()
            .to_string()
    }
}

/// The `p` quantile (0..=1) of ascending `sorted`; 0 when it is empty.
pub fn percentile(sorted: &[u64], p: f64) -> u64 {
    sorted
        .get(((sorted.len() as f64 * p) as usize).min(sorted.len().saturating_sub(1)))
        .copied()
        .unwrap_or(0)
}

/// Microseconds from each id's start to its arrival, for the ids that arrived, ascending.
pub fn latencies_us(
    started: &std::collections::HashMap<String, Instant>,
    arrived: &std::collections::HashMap<String, Instant>,
) -> Vec<u64> {
    let mut lat: Vec<u64> = started
        .iter()
        .filter_map(|(id, t0)| {
            arrived
                .get(id)
                .map(|t1| t1.saturating_duration_since(*t0).as_micros() as u64)
        })
        .collect();
    lat.sort_unstable();
    lat
}

/// Writes a benchmark's results to `bench/results/<name>.json` (pretty, one trailing newline)
/// and says where.
pub fn write_bench_results(name: &str, doc: &serde_json::Value) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/results");
    std::fs::create_dir_all(&dir).expect("bench/results is writable");
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, serde_json::to_string_pretty(doc).expect("JSON") + "\n").expect("results written");
    println!("\nwritten to {}", path.canonicalize().unwrap_or(path).display());
}

/// For each case measured with NATS auth on and off (`(auth, case, concurrency, req/s)`),
/// prints the auth-on throughput as a share of auth-off and returns the same as JSON (the
/// `authCost` of a results file).
pub fn auth_cost(cases: &[(bool, &str, usize, f64)]) -> Vec<serde_json::Value> {
    let mut cost = Vec::new();
    for (_, case, concurrency, on) in cases.iter().filter(|c| c.0) {
        let off = cases.iter().find(|c| !c.0 && c.1 == *case && c.2 == *concurrency);
        if let Some((_, _, _, off)) = off {
            let ratio = on / off.max(1.0);
            println!(
                "auth on/off {case:<34} conc {concurrency:>3}: {:.1} % of the throughput",
                ratio * 100.0
            );
            cost.push(serde_json::json!({
                "case": case, "concurrency": concurrency,
                "authOnShareOfAuthOff": (ratio * 1000.0).round() / 1000.0,
            }));
        }
    }
    cost
}

/// The value of an unlabelled sample `name` in a Prometheus text exposition; 0 when absent.
pub fn metric_value(exposition: &str, name: &str) -> f64 {
    exposition
        .lines()
        .find(|l| l.starts_with(name) && l[name.len()..].starts_with(' '))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0)
}

/// A connection with the harness identity of `agent` (in `default`), as its spawner mints it:
/// calls go out on the agent's harness form of each subject, as its harness makes them.
pub struct AsAgent {
    pub client: async_nats::Client,
    pub agent: String,
}

impl AsAgent {
    pub async fn connect(nats: &Nats, agent: &str) -> AsAgent {
        let creds = nats.harness_creds(agent, "default").expect("auth on");
        let client = async_nats::ConnectOptions::with_credentials(&creds)
            .expect("harness creds")
            .custom_inbox_prefix(relay_contracts::access::harness_inbox_prefix(agent))
            .connect(&nats.url)
            .await
            .expect("connect as a harness");
        AsAgent {
            client,
            agent: agent.into(),
        }
    }

    /// The agent's harness form of `subject`.
    pub fn on(&self, subject: &str) -> String {
        relay_contracts::access::harness_subject("default", &self.agent, subject)
    }

    pub async fn call(&self, subject: &str, body: serde_json::Value) -> Result<serde_json::Value, WireError> {
        call_json(&self.client, &self.on(subject), body).await
    }

    /// A call that must succeed.
    pub async fn ok(&self, subject: &str, body: serde_json::Value) -> serde_json::Value {
        expect_ok(&self.client, &self.on(subject), body).await
    }

    /// A call that must fail with `code`; its message.
    pub async fn err(&self, subject: &str, body: serde_json::Value, code: &str) -> String {
        expect_err(&self.client, &self.on(subject), body, code)
            .await
            .error
            .message
    }

    /// A call that must be `forbidden`; its message.
    pub async fn forbidden(&self, subject: &str, body: serde_json::Value) -> String {
        self.err(subject, body, "forbidden").await
    }
}

/// What one database did on a [`Postgres::start_profiled`] server between [`SqlProfile::start`]
/// and [`SqlProfile::read`]: statements (each one round trip from the services' pools),
/// transactions, rows written, WAL, and the statements run most often.
pub struct SqlProfile {
    admin: sqlx::PgPool,
    database: String,
    before: (i64, i64, i64),
}

impl SqlProfile {
    /// Resets the statement counters; the server must have been started profiled.
    pub async fn start(server: &Postgres, db: &Database) -> SqlProfile {
        let admin = sqlx::PgPool::connect(&server.admin_url)
            .await
            .expect("connect as admin");
        sqlx::query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
            .execute(&admin)
            .await
            .expect("pg_stat_statements (start the server with Postgres::start_profiled)");
        sqlx::query("SELECT pg_stat_statements_reset()")
            .execute(&admin)
            .await
            .unwrap();
        let before = Self::counters(&admin, &db.name).await;
        SqlProfile {
            admin,
            database: db.name.clone(),
            before,
        }
    }

    /// (transactions committed, rows written, WAL bytes) so far.
    async fn counters(admin: &sqlx::PgPool, database: &str) -> (i64, i64, i64) {
        sqlx::query_as(
            "SELECT d.xact_commit, d.tup_inserted + d.tup_updated + d.tup_deleted, w.wal_bytes::bigint
             FROM pg_stat_database d, pg_stat_wal w WHERE d.datname = $1",
        )
        .bind(database)
        .fetch_one(admin)
        .await
        .unwrap()
    }

    /// One line of a [`SqlProfile::read`] result: statements, transactions, rows, WAL, time.
    pub fn summary(profile: &serde_json::Value) -> String {
        let p = profile;
        format!(
            "{} statements (round trips), {} transactions, {} rows written, {} WAL bytes, {} ms executing, {} ms planning",
            p["statements"], p["transactions"], p["rowsWritten"], p["walBytes"], p["statementMs"], p["planningMs"]
        )
    }

    /// The statements of a [`SqlProfile::read`] result run most often, then those that took the
    /// most time, a line each.
    pub fn top_lines(profile: &serde_json::Value) -> Vec<String> {
        let lines = |key: &str| {
            profile[key]
                .as_array()
                .into_iter()
                .flatten()
                .map(|t| {
                    format!(
                        "  {:>5} × ({:>4.0}% of the time, {:.2} ms planning) {}",
                        t["perMessage"],
                        t["timeShare"].as_f64().unwrap_or_default() * 100.0,
                        t["planMsPerMessage"].as_f64().unwrap_or_default(),
                        t["statement"].as_str().unwrap_or("")
                    )
                })
                .collect::<Vec<_>>()
        };
        let mut out = lines("top");
        out.push("  …and those that took the most time:".into());
        out.extend(lines("slowest"));
        out
    }

    /// Per message of `messages`: statements, transactions, rows written, WAL bytes, and the
    /// `top` statements by calls (per message, with the share of the database's time).
    pub async fn read(&self, messages: usize, top: i64) -> serde_json::Value {
        // The statistics collector reports a backend's counters when it goes idle: give it a beat.
        tokio::time::sleep(std::time::Duration::from_millis(600)).await;
        let n = messages.max(1) as f64;
        let after = Self::counters(&self.admin, &self.database).await;
        let (calls, ms, plan_ms): (f64, f64, f64) = sqlx::query_as(
            "SELECT coalesce(sum(calls), 0)::float8, coalesce(sum(total_exec_time), 0)::float8,
                    coalesce(sum(total_plan_time), 0)::float8
             FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = $1",
        )
        .bind(&self.database)
        .fetch_one(&self.admin)
        .await
        .unwrap();
        let round = |x: f64| (x * 100.0).round() / 100.0;
        // The `top` statements by `order`: per message, with their share of the executing time.
        let ranked = async |order: &str| -> Vec<serde_json::Value> {
            let rows: Vec<(String, f64, f64, f64)> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
                "SELECT regexp_replace(s.query, '\\s+', ' ', 'g'), s.calls::float8, s.total_exec_time,
                        s.total_plan_time
                 FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = $1
                 ORDER BY {order} LIMIT $2"
            )))
            .bind(&self.database)
            .bind(top)
            .fetch_all(&self.admin)
            .await
            .unwrap();
            rows.into_iter()
                .map(|(q, c, t, p)| {
                    serde_json::json!({
                        "perMessage": round(c / n),
                        "timeShare": round(t / ms.max(f64::EPSILON)),
                        "planMsPerMessage": round(p / n),
                        "statement": q.chars().take(140).collect::<String>(),
                    })
                })
                .collect()
        };
        serde_json::json!({
            "statements": round(calls / n),
            "transactions": round((after.0 - self.before.0) as f64 / n),
            "rowsWritten": round((after.1 - self.before.1) as f64 / n),
            "walBytes": ((after.2 - self.before.2) as f64 / n).round(),
            "statementMs": round(ms / n),
            "planningMs": round(plan_ms / n),
            "top": ranked("s.calls DESC, s.total_exec_time DESC").await,
            "slowest": ranked("s.total_exec_time + s.total_plan_time DESC").await,
        })
    }
}
