//! A node's configuration files, written before each start: cassandra.yaml (by `format!`),
//! logback.xml (the log to stdout, which the launch sends to logs/system.log) and, with racks,
//! cassandra-rackdc.properties.

use std::path::Path;

use super::error::{Error, Result};
use super::layout::{Cluster, CQL_PORT};
use super::tokens::node_token;

/// What a node's yaml depends on besides the cluster.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NodeConfig {
    /// The node.
    pub(crate) i: u32,
    /// The cluster size it is written for (the token of a fresh node follows from it).
    pub(crate) n: u32,
    pub(crate) auth: bool,
    pub(crate) tls: bool,
    /// `auto_bootstrap`: a node added to a running cluster streams its share first.
    pub(crate) bootstrap: bool,
}

/// The log configuration: everything at INFO to stdout.
const LOGBACK_XML: &str = r#"<configuration>
  <appender name="STDOUT" class="ch.qos.logback.core.ConsoleAppender">
    <encoder><pattern>%-5level [%thread] %date{ISO8601} %F:%L - %msg%n</pattern></encoder>
  </appender>
  <root level="INFO"><appender-ref ref="STDOUT"/></root>
</configuration>
"#;

/// Writes `contents` to `path`.
pub(crate) fn write(path: &Path, contents: &str) -> Result<()> {
    std::fs::write(path, contents).map_err(Error::io(format!("write {}", path.display())))
}

impl Cluster {
    /// Writes node `c.i`'s folders and configuration files (making its TLS material first with
    /// `--tls`). A node added to a running cluster keeps the token it joined with (its `token`
    /// file).
    pub(crate) fn write_node_config(
        &self,
        c: NodeConfig,
        tools: &super::programs::Tools,
    ) -> Result<()> {
        let dir = self.node_dir(c.i);
        let token = std::fs::read_to_string(dir.join("token"))
            .map(|t| t.trim_end_matches('\n').to_owned())
            .unwrap_or_else(|_| node_token(c.i, c.n).to_string());
        for sub in [
            "data",
            "commitlog",
            "saved_caches",
            "hints",
            "cdc_raw",
            "logs",
            "triggers",
        ] {
            let path = dir.join(sub);
            std::fs::create_dir_all(&path)
                .map_err(Error::io(format!("create {}", path.display())))?;
        }
        let snitch = match self.rack(c.i) {
            Some(rack) => {
                let props = format!("dc=datacenter1\nrack={rack}\n");
                write(&dir.join("cassandra-rackdc.properties"), &props)?;
                "GossipingPropertyFileSnitch"
            }
            None => "SimpleSnitch",
        };
        let mut yaml = self.yaml(c, &token, snitch);
        if c.tls {
            self.make_tls_material(c.i, tools)?;
            yaml.push_str(&self.tls_yaml(c.i));
        }
        if let Some(extra) = &self.extra_yaml {
            yaml.push_str(&format!("# DOPPIO_CASSANDRA_EXTRA_YAML:\n{extra}\n"));
        }
        write(&dir.join("cassandra.yaml"), &yaml)?;
        write(&dir.join("logback.xml"), LOGBACK_XML)
    }

    /// cassandra.yaml's body (without TLS and extra lines).
    pub(crate) fn yaml(&self, c: NodeConfig, token: &str, snitch: &str) -> String {
        let dir = self.node_dir(c.i);
        let dir = dir.display();
        let (authenticator, authorizer) = if c.auth {
            ("PasswordAuthenticator", "CassandraAuthorizer")
        } else {
            ("AllowAllAuthenticator", "AllowAllAuthorizer")
        };
        format!(
            "# Written by scripts/cassandra.sh for node {i} of {n}. Edits are overwritten on start.
cluster_name: {name}
num_tokens: 1
initial_token: {token}
partitioner: org.apache.cassandra.dht.Murmur3Partitioner
auto_bootstrap: {bootstrap}
commitlog_sync: periodic
commitlog_sync_period: 10000ms
data_file_directories:
  - {dir}/data
commitlog_directory: {dir}/commitlog
saved_caches_directory: {dir}/saved_caches
hints_directory: {dir}/hints
cdc_raw_directory: {dir}/cdc_raw
seed_provider:
  - class_name: org.apache.cassandra.locator.SimpleSeedProvider
    parameters:
      - seeds: \"{seed}:7000\"
listen_address: {addr}
rpc_address: {addr}
storage_port: 7000
native_transport_port: {CQL_PORT}
start_native_transport: true
endpoint_snitch: {snitch}
authenticator: {authenticator}
authorizer: {authorizer}
role_manager: CassandraRoleManager
concurrent_compactors: 1
# Small machine, test workloads: keep background work and memory modest.
key_cache_size: 16MiB
counter_cache_size: 8MiB
materialized_views_enabled: true
user_defined_functions_enabled: true
",
            i = c.i,
            n = c.n,
            name = self.name(),
            bootstrap = c.bootstrap,
            seed = self.addr(1),
            addr = self.addr(c.i),
        )
    }

    /// The yaml lines of `--tls`: the native port speaks TLS only.
    fn tls_yaml(&self, i: u32) -> String {
        format!(
            "# --tls: the native port speaks TLS only (a plaintext client is refused).
client_encryption_options:
  enabled: true
  optional: false
  ssl_context_factory:
    class_name: org.apache.cassandra.security.PEMBasedSslContextFactory
  keystore: {}/tls/node{i}.bundle.pem
  require_client_auth: false
",
            self.state.display()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_yaml_names_the_node_its_token_peers_and_options() {
        let cluster = Cluster::new("/s", 21).unwrap_or_else(|e| panic!("{e}"));
        let c = NodeConfig {
            i: 2,
            n: 3,
            auth: true,
            tls: false,
            bootstrap: false,
        };
        let yaml = cluster.yaml(c, "-3074457345618258604", "GossipingPropertyFileSnitch");
        for line in [
            "# Written by scripts/cassandra.sh for node 2 of 3. Edits are overwritten on start.",
            "cluster_name: doppio-test-21",
            "initial_token: -3074457345618258604",
            "auto_bootstrap: false",
            "  - /s/node2/data",
            "cdc_raw_directory: /s/node2/cdc_raw",
            "      - seeds: \"127.0.0.21:7000\"",
            "listen_address: 127.0.0.22",
            "rpc_address: 127.0.0.22",
            "native_transport_port: 9042",
            "endpoint_snitch: GossipingPropertyFileSnitch",
            "authenticator: PasswordAuthenticator",
            "authorizer: CassandraAuthorizer",
        ] {
            assert!(yaml.lines().any(|l| l == line), "{line:?} in:\n{yaml}");
        }
        assert_eq!(yaml.lines().count(), 33);
        assert!(yaml.ends_with("user_defined_functions_enabled: true\n"));
        let tls = cluster.tls_yaml(2);
        assert!(
            tls.contains("  keystore: /s/tls/node2.bundle.pem\n"),
            "{tls}"
        );
    }
}
