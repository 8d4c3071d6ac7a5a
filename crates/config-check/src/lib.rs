//! No code: `tests/example_config.rs` checks that config/relay.example.toml documents every
//! setting of every service (its `Settings` and their defaults) and names no setting that none
//! of them has. It lives in a crate of its own because it needs every service's library.
