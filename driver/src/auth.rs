//! Authentication during the handshake: the server names an authenticator class in
//! AUTHENTICATE, the client answers with tokens until AUTH_SUCCESS.
//!
//! [`Authenticator`] is the pluggable part; [`PasswordAuthenticator`] implements SASL PLAIN
//! as Cassandra's `PasswordAuthenticator` (and DSE's and ScyllaDB's equivalents) expect it.
//! Configurations hold an [`AuthenticatorFactory`]: configurations cross to every shard's
//! thread, and each handshake makes its own authenticator (which may be `!Send`).

use std::rc::Rc;
use std::sync::Arc;

/// Makes the authenticator of one handshake (on the shard that runs it).
pub type AuthenticatorFactory = Arc<dyn Fn() -> Rc<dyn Authenticator> + Send + Sync>;

/// Produces the tokens of a SASL exchange for one connection.
pub trait Authenticator {
    /// The first token, sent in reply to AUTHENTICATE naming `server_authenticator` (the
    /// server's Java class). An error refuses the server's mechanism.
    fn initial_response(&self, server_authenticator: &str) -> Result<Vec<u8>, String>;

    /// The reply to an AUTH_CHALLENGE; most mechanisms (PLAIN among them) never see one.
    fn evaluate_challenge(&self, challenge: Option<&[u8]>) -> Result<Vec<u8>, String> {
        let _ = challenge;
        Err("this authenticator does not expect a challenge".into())
    }
}

/// User name and password, sent as SASL PLAIN (`\0user\0password`).
#[derive(Clone, PartialEq, Eq)]
pub struct PasswordAuthenticator {
    username: String,
    password: String,
}

impl PasswordAuthenticator {
    /// Credentials for `username`.
    pub fn new(username: impl Into<String>, password: impl Into<String>) -> Self {
        Self {
            username: username.into(),
            password: password.into(),
        }
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
    fn initial_response(&self, _server_authenticator: &str) -> Result<Vec<u8>, String> {
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
}
