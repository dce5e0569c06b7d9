//! Connecting a bank through the service's hosted widget (docs/connect.md): its URL, what it
//! reports when a bank is connected, and the loopback catcher that receives that report.

#[cfg(feature = "connect")]
pub mod catcher;
pub mod connection;
#[cfg(feature = "connect")]
pub mod peer;
#[cfg(feature = "connect")]
pub mod serve;
#[cfg(feature = "connect")]
pub mod start;
pub mod url;

#[cfg(feature = "connect")]
pub use catcher::Catcher;
pub use connection::{Connection, Source};
#[cfg(feature = "connect")]
pub use serve::Limits;
#[cfg(feature = "connect")]
pub use start::Started;
pub use url::{widget_base, widget_base_of, ConnectOptions, ConnectUrl};
