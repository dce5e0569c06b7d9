//! The first step of `client.connect(...)` (docs/connect.md#from-a-script), in this order: the
//! options checked, the authorize token minted, and only then the catcher bound, so that a
//! refused option or a failed token call leaves no port open; then the widget's URL built with
//! the catcher as its redirect, and the catcher's launch page armed with it.

use super::catcher::Catcher;
use super::serve::Limits;
use super::url::{widget_base_of, ConnectOptions, ConnectUrl};
use crate::call::Call;
use crate::client::Client;
use crate::error::Error;

/// A catcher serving, and the two ways to the widget it waits for.
pub struct Started {
    /// The widget's URL, the catcher's return path as its redirect (shown with its token masked).
    pub widget: ConnectUrl,
    /// What to open the browser at: the catcher's launch page, sent on to `widget` once.
    pub launch_url: String,
    pub catcher: Catcher,
}

impl Client {
    /// Mints the token, then binds the catcher (within `limits`) on the runtime this runs on, then
    /// builds the widget's URL. `options.redirect_url` is the catcher's: it must be None.
    pub async fn start_connect(&self, call: &Call, options: &ConnectOptions, limits: Limits) -> Result<Started, Error> {
        if options.redirect_url.is_some() {
            return Err(Error::config(
                "redirect_url",
                "is the loopback catcher's in connect(): to redirect elsewhere, build the URL with connect_url()",
            ));
        }
        let base = widget_base_of(&self.config().base_url)?;
        // Checked before a token is spent or a port opened for options that would be refused.
        options.params()?;
        let token = self.authorize_token(call).await?;
        let runtime = tokio::runtime::Handle::try_current()
            .map_err(|error| Error::Internal { message: format!("the catcher has no runtime to serve on: {error}") })?;
        let catcher = Catcher::start_with(&runtime, limits)?;
        let options = ConnectOptions { redirect_url: Some(catcher.url().to_owned()), ..options.clone() };
        let widget = options.build(base, token)?;
        let launch_url = catcher.launch(&widget).to_owned();
        Ok(Started { widget, launch_url, catcher })
    }
}
