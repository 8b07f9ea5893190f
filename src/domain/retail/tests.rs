//! Retail tests.
