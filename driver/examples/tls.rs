//! TLS: a session whose connections are encrypted with rustls, trusting the CA of a PEM file.
//!
//! ```sh
//! scripts/cassandra-tls.sh start    # a node whose native port speaks TLS only, on 127.0.0.41
//! cargo run -p doppio-driver --example tls -- 127.0.0.41:9042 .cassandra-tls/tls/ca.pem [glommio|uring]
//! ```
//! The node's certificate must chain to a CA of the file and carry the node's IP address
//! (unless a server name is given with `with_server_name`); a client certificate is optional
//! (`with_client_cert`). A failure is a typed `TlsFailure` (unknown CA, expired, wrong name,
//! TLS on one side only, ...), returned at once instead of retried.

use std::net::SocketAddr;
use std::path::Path;

use doppio_driver::config::TlsConfig;
use doppio_driver::rt::Runtime;
use doppio_driver::SessionConfig;
use doppio_driver::{Cluster, Error};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let node: SocketAddr = args
        .next()
        .as_deref()
        .unwrap_or("127.0.0.41:9042")
        .parse()?;
    let ca = args
        .next()
        .unwrap_or_else(|| ".cassandra-tls/tls/ca.pem".to_owned());
    let runtime: Runtime = args.next().as_deref().unwrap_or("glommio").parse()?;
    let version = run(node, Path::new(&ca), runtime)?;
    println!("{node} over TLS (CA {ca}): Cassandra {version}");
    Ok(())
}

/// Connects over TLS, trusting the CA(s) of `ca`, and returns the node's release version.
pub(crate) fn run(
    node: SocketAddr,
    ca: &Path,
    runtime: Runtime,
) -> Result<String, Box<dyn std::error::Error>> {
    let tls = TlsConfig::from_ca_file(ca)?;
    let cluster = Cluster::builder()
        .session_config(SessionConfig::new(node).with_tls(tls))
        .runtime(runtime)
        .cores(&[0])
        .pin(false)
        .build()?;
    let answers = cluster.run_on_shards(|session| async move {
        let rows: Vec<(String,)> = session
            .query_unpaged("SELECT release_version FROM system.local", &())
            .await?
            .typed_rows()?;
        Ok::<_, Error>(rows.into_iter().next().map(|(v,)| v).unwrap_or_default())
    })?;
    cluster.shutdown();
    let first = answers
        .into_iter()
        .next()
        .ok_or("the cluster has no shard")?;
    Ok(first?)
}
