//! Group commit for one cache file, off the callers' path.
//!
//! A commit is an fsync; at hundreds of episodes in flight one fsync per answer, each awaited
//! by the call that stored it, made the disk a bound. So an answer is *queued* and the call
//! goes on; one committer at a time (a short-lived thread the first writer of an idle file
//! starts) takes everything queued and commits it in one transaction, then the next batch,
//! until the queue is empty. Batches commit in order, so after a crash what is lost is always
//! the newest answers, never one in the middle.
//!
//! Durability is asked for where it matters: [`Group::settle`] waits until everything queued
//! so far is committed (the harness calls it before an episode is written to its journal, so
//! an episode acknowledged as done never has answers only in memory); [`Group::wait_for`]
//! waits for one batch (the blocking put). Until its batch is committed a queued answer is
//! still read back ([`Group::pending`]), so no request is asked twice for want of a commit.
//!
//! Architecture invariant: the group knows entries and batches, not redb; the cache hands it
//! the commit to run.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::llm::error::LlmError;

/// How long an idle committer waits for more answers before its thread ends: under load
/// one thread commits batch after batch instead of a thread being started for each.
const LINGER: Duration = Duration::from_millis(20);

/// A key and the answer's bytes.
pub(super) type Entry = ([u8; 32], Vec<u8>);

pub(super) struct Group {
    state: Mutex<State>,
    committed: Condvar,
}

struct State {
    queued: Vec<Entry>,
    /// The batch being committed now (still read by [`Group::pending`]).
    in_flight: Option<Arc<Vec<Entry>>>,
    /// The batch that `queued` will be committed as.
    next: u64,
    /// Every batch up to this one has been committed or has failed.
    finished: u64,
    /// A committer is running.
    committing: bool,
    /// Batches whose commit failed (a blocking writer of one reads its error).
    failed: HashMap<u64, LlmError>,
    /// The first failed commit: from then on every [`Group::settle`] fails, since answers
    /// of the caller's may have been in it.
    broken: Option<LlmError>,
}

impl Default for Group {
    fn default() -> Self {
        Group {
            state: Mutex::new(State {
                queued: Vec::new(),
                in_flight: None,
                next: 1,
                finished: 0,
                committing: false,
                failed: HashMap::new(),
                broken: None,
            }),
            committed: Condvar::new(),
        }
    }
}

impl Group {
    /// Each update of the state is one assignment, so a panic elsewhere while the lock was
    /// held cannot leave it torn: carry on.
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn wait<'a>(&self, state: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        self.committed
            .wait(state)
            .unwrap_or_else(|p| p.into_inner())
    }

    /// Queue an answer: the batch it will be committed in, and whether the caller must start
    /// a committer ([`Group::commit_queued`]) because none is running.
    pub fn queue(&self, entry: Entry) -> (u64, bool) {
        let mut state = self.lock();
        state.queued.push(entry);
        let start = !state.committing;
        state.committing = true;
        if !start && state.queued.len() == 1 && state.in_flight.is_none() {
            // The committer may be idle, lingering for work: wake it.
            self.committed.notify_all();
        }
        (state.next, start)
    }

    /// The committer: commit what is queued, batch after batch, until nothing is and
    /// nothing comes for [`LINGER`].
    pub fn commit_queued(&self, commit: impl Fn(&[Entry]) -> Result<(), LlmError>) {
        loop {
            let mut state = self.lock();
            let deadline = Instant::now() + LINGER;
            while state.queued.is_empty() {
                let now = Instant::now();
                if now >= deadline {
                    state.committing = false;
                    self.committed.notify_all();
                    return;
                }
                state = self
                    .committed
                    .wait_timeout(state, deadline - now)
                    .map(|(s, _)| s)
                    .unwrap_or_else(|p| p.into_inner().0);
            }
            let batch = Arc::new(std::mem::take(&mut state.queued));
            state.in_flight = Some(Arc::clone(&batch));
            let id = state.next;
            state.next += 1;
            drop(state);
            let result = commit(&batch);
            let mut state = self.lock();
            state.finished = id;
            state.in_flight = None;
            if let Err(e) = result {
                state.broken.get_or_insert_with(|| e.clone());
                state.failed.insert(id, e);
            }
            self.committed.notify_all();
        }
    }

    /// Wait until batch `id` is committed; its error if it failed.
    pub fn wait_for(&self, id: u64) -> Result<(), LlmError> {
        let mut state = self.lock();
        while state.finished < id {
            state = self.wait(state);
        }
        match state.failed.get(&id) {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    /// Wait until everything queued so far is committed; `Err` (the first failure) once any
    /// commit has failed: which answers were in it is not known per caller, so a caller is
    /// told its answers are durable only while every commit has succeeded.
    pub fn settle(&self) -> Result<(), LlmError> {
        match &self.drained().broken {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    /// Wait until everything queued so far is committed or has failed.
    fn drained(&self) -> MutexGuard<'_, State> {
        let mut state = self.lock();
        let target = if state.queued.is_empty() {
            state.next - 1
        } else {
            state.next
        };
        while state.finished < target {
            state = self.wait(state);
        }
        state
    }

    /// Wait as [`Self::settle`] does, without its verdict (a count of stored answers).
    pub fn drain(&self) {
        drop(self.drained());
    }

    /// Nothing queued or being committed (a settle would not wait).
    pub fn is_settled(&self) -> bool {
        let state = self.lock();
        state.queued.is_empty() && state.in_flight.is_none() && state.broken.is_none()
    }

    /// The answer stored under `key` that is queued or being committed, if any (the newest).
    pub fn pending(&self, key: &[u8; 32]) -> Option<Vec<u8>> {
        let state = self.lock();
        let newest = |entries: &[Entry]| {
            entries
                .iter()
                .rev()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.clone())
        };
        newest(&state.queued).or_else(|| state.in_flight.as_deref().and_then(|b| newest(b)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn answers_queued_during_a_commit_go_together_in_the_next_one_and_stay_readable() {
        let group = Arc::new(Group::default());
        let (release, gate) = mpsc::channel::<()>();
        let sizes = Arc::new(Mutex::new(Vec::new()));
        let (first, start) = group.queue(([0; 32], vec![0]));
        assert_eq!((first, start), (1, true));
        let committer = {
            let (group, sizes) = (Arc::clone(&group), Arc::clone(&sizes));
            std::thread::spawn(move || {
                group.commit_queued(|batch| {
                    if batch.len() == 1 {
                        gate.recv().unwrap(); // the first commit takes a while
                    }
                    sizes.lock().unwrap().push(batch.len());
                    Ok(())
                })
            })
        };
        while group.lock().in_flight.is_none() {
            std::thread::yield_now();
        }
        // Eight answers arrive while batch 1 is being written: none starts a committer.
        for i in 1..=8u8 {
            assert_eq!(group.queue(([i; 32], vec![i])), (2, false));
        }
        // Both the one being written and the queued ones are read back.
        assert_eq!(group.pending(&[0; 32]), Some(vec![0]));
        assert_eq!(group.pending(&[5; 32]), Some(vec![5]));
        assert_eq!(group.pending(&[9; 32]), None);
        assert!(!group.is_settled());
        release.send(()).unwrap();
        group.settle().unwrap();
        committer.join().unwrap();
        assert_eq!(*sizes.lock().unwrap(), vec![1, 8]);
        assert!(group.is_settled());
        assert_eq!(group.pending(&[5; 32]), None);
    }

    #[test]
    fn a_failed_commit_reaches_its_blocking_writer_and_every_later_settle() {
        let group = Group::default();
        let (id, start) = group.queue(([1; 32], vec![1]));
        assert!(start);
        let fail = |_: &[Entry]| {
            Err(LlmError::Cache {
                path: "c.redb".into(),
                message: "disk full".into(),
            })
        };
        group.commit_queued(fail);
        assert!(
            group
                .wait_for(id)
                .unwrap_err()
                .to_string()
                .contains("disk full")
        );
        assert!(
            group
                .settle()
                .unwrap_err()
                .to_string()
                .contains("disk full")
        );
        // A later commit that succeeds does not make the earlier answers durable.
        let (id, start) = group.queue(([2; 32], vec![2]));
        assert!(start);
        group.commit_queued(|_| Ok(()));
        group.wait_for(id).unwrap();
        assert!(group.settle().is_err());
        assert!(!group.is_settled());
    }
}
