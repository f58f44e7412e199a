//! Placeholder: filled in by the ors door work.

mod common;

#[allow(unused_imports)]
use common::*;
