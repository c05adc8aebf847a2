//! Authentication during the handshake: the server names an authenticator class in
//! AUTHENTICATE, the client answers with tokens until AUTH_SUCCESS.
//!
//! [`Authenticator`] is the pluggable part; [`PasswordAuthenticator`] implements SASL PLAIN
//! as Cassandra's `PasswordAuthenticator` (and DSE's and ScyllaDB's equivalents) expect it.
//! Configurations hold an [`AuthenticatorFactory`]: configurations cross to every shard's
//! thread, and each handshake makes its own authenticator (which may be `!Send`).

use std::rc::Rc;
use std::sync::Arc;

use doppio_proto::response::ErrorResponse;

/// Makes the authenticator of one handshake (on the shard that runs it).
pub type AuthenticatorFactory = Arc<dyn Fn() -> Rc<dyn Authenticator> + Send + Sync>;

/// Produces the tokens of a SASL exchange for one connection.
pub trait Authenticator {
    /// The first token, sent in reply to AUTHENTICATE naming `server_authenticator` (the
    /// server's Java class). An error refuses the server's mechanism.
    fn initial_response(&self, server_authenticator: &str) -> Result<Vec<u8>, AuthError>;

    /// The reply to an AUTH_CHALLENGE; most mechanisms (PLAIN among them) never see one.
    fn evaluate_challenge(&self, challenge: Option<&[u8]>) -> Result<Vec<u8>, AuthError> {
        let _ = challenge;
        Err(AuthError::UnexpectedChallenge)
    }
}

/// Why authentication failed: what an [`Authenticator`] refuses with, and what the handshake
/// reports (as the source of [`crate::Error::Authentication`]). No variant holds a secret.
#[derive(Debug, Clone, thiserror::Error)]
pub enum AuthError {
    /// The node requires authentication but no credentials were configured.
    #[error(
        "the node requires authentication ({server_authenticator}) but no credentials were \
         configured"
    )]
    NotConfigured {
        /// The server authenticator's class.
        server_authenticator: String,
    },
    /// The node asks for a server authenticator the password authenticator does not send
    /// credentials to (see [`PLAIN_AUTHENTICATORS`]); none were sent.
    #[error(
        "the node asks for authenticator {server_authenticator}, which the password \
         authenticator does not know (it answers {}; \
         PasswordAuthenticator::also_for adds one): no credentials were sent",
        PLAIN_AUTHENTICATORS.join(", ")
    )]
    UnknownAuthenticator {
        /// The server authenticator's class.
        server_authenticator: String,
    },
    /// The node sent a challenge to an authenticator that expects none.
    #[error("this authenticator does not expect a challenge")]
    UnexpectedChallenge,
    /// The node refused the credentials (its ERROR, with every field it sent).
    #[error("{0}")]
    Refused(Box<ErrorResponse>),
    /// The exchange did not end with AUTH_SUCCESS within the rounds allowed.
    #[error("the exchange did not finish after {rounds} rounds")]
    Unfinished {
        /// The rounds sent.
        rounds: usize,
    },
    /// A custom authenticator's own reason (see [`AuthError::other`]).
    #[error("{0}")]
    Other(#[source] Arc<dyn std::error::Error + Send + Sync>),
}

impl AuthError {
    /// A custom authenticator's refusal: any error, or a message (`&str`, `String`).
    pub fn other(reason: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        AuthError::Other(Arc::from(reason.into()))
    }
}

/// The server authenticators known to take SASL PLAIN as their first token: the password is
/// sent to these only (and to those added with [`PasswordAuthenticator::also_for`]).
pub const PLAIN_AUTHENTICATORS: &[&str] = &[
    "org.apache.cassandra.auth.PasswordAuthenticator",
    "org.apache.cassandra.auth.MutualTlsWithPasswordFallbackAuthenticator",
    "com.datastax.bdp.cassandra.auth.DseAuthenticator",
    "com.scylladb.auth.PasswordAuthenticator",
    "com.scylladb.auth.TransitionalAuthenticator",
    "com.scylladb.auth.SaslauthdAuthenticator",
];

/// User name and password, sent as SASL PLAIN (`\0user\0password`) to a server
/// authenticator known to expect it. Any other is refused with an error naming it, before
/// the password leaves the process: a server asking for a mechanism the driver does not
/// know gets no credentials meant for another.
#[derive(Clone, PartialEq, Eq)]
pub struct PasswordAuthenticator {
    username: String,
    password: String,
    /// Server authenticators accepted beyond [`PLAIN_AUTHENTICATORS`].
    also: Vec<String>,
}

impl PasswordAuthenticator {
    /// Credentials for `username`.
    pub fn new(username: impl Into<String>, password: impl Into<String>) -> Self {
        Self {
            username: username.into(),
            password: password.into(),
            also: Vec::new(),
        }
    }

    /// Sends the credentials to the server authenticator `class` too (a custom one that
    /// takes SASL PLAIN).
    pub fn also_for(mut self, class: impl Into<String>) -> Self {
        self.also.push(class.into());
        self
    }

    /// The user name.
    pub fn username(&self) -> &str {
        &self.username
    }

    /// A factory of these credentials, for a configuration.
    pub fn factory(self) -> AuthenticatorFactory {
        Arc::new(move || Rc::new(self.clone()) as Rc<dyn Authenticator>)
    }
}

impl std::fmt::Debug for PasswordAuthenticator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the password.
        f.debug_struct("PasswordAuthenticator")
            .field("username", &self.username)
            .finish_non_exhaustive()
    }
}

impl Authenticator for PasswordAuthenticator {
    fn initial_response(&self, server_authenticator: &str) -> Result<Vec<u8>, AuthError> {
        let known = PLAIN_AUTHENTICATORS.contains(&server_authenticator)
            || self.also.iter().any(|a| a == server_authenticator);
        if !known {
            return Err(AuthError::UnknownAuthenticator {
                server_authenticator: server_authenticator.to_owned(),
            });
        }
        let mut token = Vec::with_capacity(2 + self.username.len() + self.password.len());
        token.push(0);
        token.extend_from_slice(self.username.as_bytes());
        token.push(0);
        token.extend_from_slice(self.password.as_bytes());
        Ok(token)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_token_layout_and_no_password_in_debug() {
        let a = PasswordAuthenticator::new("cassandra", "s3cret");
        assert_eq!(
            a.initial_response("org.apache.cassandra.auth.PasswordAuthenticator")
                .unwrap(),
            b"\0cassandra\0s3cret"
        );
        assert!(!format!("{a:?}").contains("s3cret"));
        assert!(a.evaluate_challenge(Some(b"x")).is_err());
    }

    #[test]
    fn an_unknown_server_authenticator_gets_no_password_and_an_error_naming_it() {
        let a = PasswordAuthenticator::new("cassandra", "s3cret");
        for known in PLAIN_AUTHENTICATORS {
            assert!(a.initial_response(known).is_ok(), "{known}");
        }
        let e = a
            .initial_response("com.example.KerberosAuthenticator")
            .unwrap_err();
        assert!(
            matches!(&e, AuthError::UnknownAuthenticator { server_authenticator }
                if server_authenticator == "com.example.KerberosAuthenticator"),
            "{e:?}"
        );
        let e = e.to_string();
        assert!(e.contains("com.example.KerberosAuthenticator"), "{e}");
        assert!(
            e.contains(PLAIN_AUTHENTICATORS[0]),
            "names those it knows: {e}"
        );
        assert!(!e.contains("s3cret"), "{e}");
        let custom = a.also_for("com.example.PlainAuthenticator");
        assert!(custom
            .initial_response("com.example.PlainAuthenticator")
            .is_ok());
        assert!(custom
            .initial_response("com.example.KerberosAuthenticator")
            .is_err());
    }
}
