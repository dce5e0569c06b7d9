//! What the challenge loop asks of the caller: answers to a challenge.

use std::future::Future;
use std::pin::Pin;

use super::challenge::Challenge;
use super::rules::Answers;
use crate::error::Error;

/// Gives the answers to each challenge of a login. A synchronous closure
/// `FnMut(&Challenge) -> Result<Answers, Error>` is a handler; implement the trait for one that
/// waits (a person at a prompt, a trusted device).
pub trait ChallengeHandler: Send {
    fn answer<'a>(
        &'a mut self,
        challenge: &'a Challenge,
    ) -> Pin<Box<dyn Future<Output = Result<Answers, Error>> + Send + 'a>>;
}

impl<F> ChallengeHandler for F
where
    F: FnMut(&Challenge) -> Result<Answers, Error> + Send,
{
    fn answer<'a>(
        &'a mut self,
        challenge: &'a Challenge,
    ) -> Pin<Box<dyn Future<Output = Result<Answers, Error>> + Send + 'a>> {
        let answers = self(challenge);
        Box::pin(async move { answers })
    }
}
