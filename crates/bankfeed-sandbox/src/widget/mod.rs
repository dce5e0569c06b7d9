//! The hosted connection widget, imitated offline (docs/sandbox.md#the-hosted-widget): the pages
//! a person goes through to connect an account (consent, institution, credentials, a page per
//! challenge, account selection, the redirect), served at `/v2/` on the API's port, posting the
//! documented events to the page that embeds them. The login goes through the sandbox's own
//! Authorize, so every user asks exactly what the REST API asks.

mod events;
mod flow;
mod lists;
mod login;
mod pages;
mod params;
mod redirect;
mod routes;
mod test_users;
mod texts;

pub(crate) use routes::router;
