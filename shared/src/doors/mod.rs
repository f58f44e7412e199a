//! Doors for trainers: other protocols over the same hub and episodes. An episode started
//! through any door is an ordinary episode (visible on the control plane, paid the same
//! rewards, recorded in the same trajectory); each door only turns [`StepRecord`]s into its
//! own wire shape.
//!
//! | door | base URL | protocol |
//! |---|---|---|
//! | [`openenv`] | `/<env>` | OpenEnv: `/ws`, `/reset`, `/step`, `/state`, `/schema`, `/metadata`, `/health` |
//! | [`ors`] | `/` | Open Reward Standard: `/list_environments`, `/create_session`, `/create`, `/<env>/call`, … |
//!
//! [`StepRecord`]: crate::step::StepRecord

use std::sync::Arc;

use axum::Router;

use crate::hub::Hub;

pub mod openenv;
pub mod ors;

/// Every door's routes, to merge into the HTTP application (behind its guard).
pub fn routes(hub: &Arc<Hub>) -> Router<Arc<Hub>> {
    Router::new()
        .merge(openenv::routes(hub))
        .merge(ors::routes(hub))
}
