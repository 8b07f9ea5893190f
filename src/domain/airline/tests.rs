//! Unit tests of the airline domain.
