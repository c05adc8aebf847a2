//! Helpers shared by the io_uring runtime's test files.

use std::net::SocketAddr;
use std::rc::Rc;
use std::time::Duration;

use doppio_rt::uring::{spawn_local, TcpListener, TcpStream};

/// `127.0.0.1:port`.
pub(crate) fn local(port: u16) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], port))
}

/// A connected pair on the running executor (client side, server side), both with
/// `TCP_NODELAY`.
pub(crate) async fn pair() -> (TcpStream, TcpStream) {
    let l = Rc::new(TcpListener::bind(local(0), false).expect("bind"));
    let addr = l.local_addr().expect("addr");
    let acc = spawn_local({
        let l = l.clone();
        async move { l.accept().await.expect("accept").0 }
    });
    let c = TcpStream::connect(addr, Duration::from_secs(1))
        .await
        .expect("connect");
    let s = acc.await;
    c.set_nodelay(true).expect("nodelay");
    s.set_nodelay(true).expect("nodelay");
    (c, s)
}
