//! What agents wait for: a registry the engine consults at quiescence to tell a clean
//! finish ([`RunOutcome::Quiescent`](super::RunOutcome)) from a stall
//! ([`RunOutcome::Stalled`](super::RunOutcome)).

use std::collections::BTreeMap;

/// Name of an agent (a runtime worker, a router, a termination detector...).
pub type AgentName = String;

/// Handle to one declared wait; pass it to [`Engine::satisfy`](super::Engine::satisfy).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WaitId(pub u64);

/// Declared waits, in declaration order.
#[derive(Default)]
pub(super) struct WaitRegistry {
    next: u64,
    waits: BTreeMap<u64, (AgentName, String)>,
}

impl WaitRegistry {
    pub fn wait(&mut self, agent: AgentName, what: String) -> WaitId {
        let id = self.next;
        self.next += 1;
        self.waits.insert(id, (agent, what));
        WaitId(id)
    }

    pub fn satisfy(&mut self, id: WaitId) -> bool {
        self.waits.remove(&id.0).is_some()
    }

    pub fn satisfy_agent(&mut self, agent: &str) -> usize {
        let before = self.waits.len();
        self.waits.retain(|_, (a, _)| a != agent);
        before - self.waits.len()
    }

    pub fn len(&self) -> usize {
        self.waits.len()
    }

    /// Outstanding waits in declaration order.
    pub fn outstanding(&self) -> Vec<(AgentName, String)> {
        self.waits.values().cloned().collect()
    }
}
