//! `install`: Java 17 and Maven from Debian's packages if they are missing, then Cassandra's
//! jars (cassandra-all and its runtime dependencies) from Maven Central into the cache, whose
//! class path file the nodes and nodetool run with. Idempotent.

use std::path::Path;
use std::time::Duration;

use super::error::{Error, Result};
use super::layout::{Cluster, CASSANDRA_VERSION};
use super::programs::{apt_install, log, succeeds, to_stderr, Tools};

/// Where Debian puts Java 17.
const JAVA17_BIN: &str = "/usr/lib/jvm/java-17-openjdk-amd64/bin";

/// `java -version`'s major version, if java runs.
fn java_major(tools: &Tools) -> Option<String> {
    let out = tools.command("java").arg("-version").output().ok()?;
    let text =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    let rest = text
        .lines()
        .find_map(|l| l.split_once("version \"").map(|(_, r)| r.to_owned()))?;
    Some(rest.chars().take_while(char::is_ascii_digit).collect())
}

/// Cassandra 5.0 runs on Java 11 or 17; we use 17. Installs it and Maven from Debian if
/// missing; the tools' `PATH` then starts with Java 17's folder.
pub(crate) fn ensure_java_and_maven() -> Result<Tools> {
    let mut tools = Tools::from_env();
    if tools.find("java").is_none() || java_major(&tools).as_deref() != Some("17") {
        if !Path::new(JAVA17_BIN).join("java").is_file() {
            log("installing Java 17 from Debian's packages");
            apt_install(&tools, &["openjdk-17-jre-headless"])?;
        }
        tools.prepend(Path::new(JAVA17_BIN));
    }
    if tools.find("mvn").is_none() {
        log("installing Maven from Debian's packages");
        apt_install(&tools, &["maven"])?;
    }
    Ok(tools)
}

impl Cluster {
    /// The class path (jars joined by `:`) if the file exists and every jar it names does.
    pub(crate) fn complete_classpath(&self) -> Option<String> {
        let text = std::fs::read_to_string(self.classpath_file()).ok()?;
        let classpath = text.trim_end_matches('\n');
        let complete =
            !classpath.is_empty() && classpath.split(':').all(|jar| Path::new(jar).is_file());
        complete.then(|| classpath.to_owned())
    }

    /// Installs Java 17 and Maven if missing and resolves cassandra-all and its dependencies
    /// into the jar cache (idempotent: a complete class path is kept).
    pub fn install(&self) -> Result<()> {
        self.installed().map(|_| ())
    }

    /// [`Cluster::install`], returning the tools and the class path.
    pub(crate) fn installed(&self) -> Result<(Tools, String)> {
        let tools = ensure_java_and_maven()?;
        if let Some(classpath) = self.complete_classpath() {
            let jars = classpath.split(':').count();
            log(&format!(
                "cassandra-all {CASSANDRA_VERSION} already installed ({jars} jars)"
            ));
            return Ok((tools, classpath));
        }
        let cache = self.cache();
        std::fs::create_dir_all(&cache)
            .map_err(Error::io(format!("create {}", cache.display())))?;
        let pom = cache.join("pom.xml");
        std::fs::write(&pom, pom_xml()).map_err(Error::io(format!("write {}", pom.display())))?;
        log(&format!(
            "resolving org.apache.cassandra:cassandra-all:{CASSANDRA_VERSION} from Maven Central"
        ));
        let file = self.classpath_file();
        let tmp = cache.join("classpath.txt.tmp");
        for attempt in 1..=3_u64 {
            let mut mvn = tools.command("mvn");
            mvn.current_dir(&cache)
                .args(["-B", "-q", "dependency:build-classpath"])
                .arg(format!("-Dmdep.outputFile={}", tmp.display()))
                .arg("-Dmdep.includeScope=runtime")
                .stdout(to_stderr());
            if succeeds(&mut mvn, "mvn")? {
                std::fs::rename(&tmp, &file)
                    .map_err(Error::io(format!("write {}", file.display())))?;
                let Some(classpath) = self.complete_classpath() else {
                    return Err(Error::Failed(
                        "classpath written but jars are missing".to_owned(),
                    ));
                };
                log(&format!("installed: {} jars", classpath.split(':').count()));
                return Ok((tools, classpath));
            }
            log(&format!("maven failed (attempt {attempt}), retrying"));
            if attempt < 3 {
                std::thread::sleep(Duration::from_secs(attempt * 5));
            }
        }
        Err(Error::Failed(
            "could not resolve cassandra-all from Maven Central".to_owned(),
        ))
    }
}

/// The project whose runtime class path is Cassandra's.
fn pom_xml() -> String {
    format!(
        r#"<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>doppio.local</groupId>
  <artifactId>cassandra-runtime</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.cassandra</groupId>
      <artifactId>cassandra-all</artifactId>
      <version>{CASSANDRA_VERSION}</version>
    </dependency>
  </dependencies>
</project>
"#
    )
}
