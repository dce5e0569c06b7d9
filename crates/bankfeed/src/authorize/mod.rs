//! Opening a session: the four request shapes, the challenge model and its answer rules, the
//! session, and what the challenge loop asks of its caller (the loop itself is
//! [`crate::Client::complete`], which sends the rounds).

pub(crate) mod challenge;
mod flow;
mod read;
mod request;
mod rules;
mod session;

pub use crate::data::login::{Institution, Login};
pub use challenge::{Challenge, ChallengeType, SecurityChallenge, MAX_CHALLENGES};
pub use flow::ChallengeHandler;
pub use request::{AuthorizeRequest, Credentials};
pub use rules::Answers;
pub use session::{Link, Session, Step};

pub(crate) use session::parse_step;
