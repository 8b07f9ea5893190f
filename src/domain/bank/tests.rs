//! Bank tests: what the conformance suite cannot know.
