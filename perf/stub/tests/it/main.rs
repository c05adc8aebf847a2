//! The stub's integration tests, one test binary (`cargo test -p doppio-stub --test it`): a
//! module per file and `support`, the helpers they share. Each test starts its own stubs on
//! ephemeral ports (or its own `doppio-stub` processes, the only ones it signals).

mod cluster;
mod metadata_ids;
mod stub;
mod support;
mod tablets_v2;
