//! The hosts a client has seen, each with its shared state, found by key.

use crate::host::state::SharedHost;
use crate::host::HostState;

/// Hosts a client remembers; past this, idle ones are forgotten (and leave `stats()`).
pub const MAX_HOSTS: usize = 256;

/// A client's hosts, in the order it first saw them. A short list, so a Vec: a map would cost
/// the wasm module more than its lookups save.
#[derive(Default)]
pub struct HostRegistry {
    hosts: Vec<SharedHost>,
}

impl HostRegistry {
    /// The state of host `key`, made with `make` when the client has not seen it (or has
    /// forgotten it). Adding a host to a full registry first forgets idle hosts (nothing in
    /// flight or queued), oldest first, so a stream of distinct hosts cannot grow memory; a busy
    /// host is never forgotten, so a registry of busy hosts may grow past [`MAX_HOSTS`].
    pub fn get_or_add(&mut self, key: &str, make: impl FnOnce() -> HostState) -> SharedHost {
        if let Some(host) = self.hosts.iter().find(|h| &*h.borrow().name == key) {
            return host.clone();
        }
        if self.hosts.len() >= MAX_HOSTS {
            let mut excess = self.hosts.len() + 1 - MAX_HOSTS;
            self.hosts.retain(|h| {
                let idle = {
                    let h = h.borrow();
                    h.slots.in_flight() == 0 && h.slots.queued() == 0
                };
                let forget = idle && excess > 0;
                excess -= usize::from(forget);
                !forget
            });
        }
        let host = make().shared();
        self.hosts.push(host.clone());
        host
    }

    /// The hosts, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &SharedHost> {
        self.hosts.iter()
    }

    /// How many hosts the client remembers.
    pub fn len(&self) -> usize {
        self.hosts.len()
    }

    /// Whether it remembers none.
    pub fn is_empty(&self) -> bool {
        self.hosts.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::HostConfig;

    fn host(name: &str) -> HostState {
        HostState::new(name, &HostConfig::DEFAULT, 0.0)
    }

    #[test]
    fn a_host_is_made_once_and_found_after() {
        let mut hosts = HostRegistry::default();
        let a = hosts.get_or_add("a.example", || host("a.example"));
        let again = hosts.get_or_add("a.example", || panic!("made twice"));
        assert!(std::rc::Rc::ptr_eq(&a, &again));
        hosts.get_or_add("b.example", || host("b.example"));
        assert_eq!(hosts.len(), 2);
    }

    #[test]
    fn a_full_registry_forgets_the_oldest_idle_host_and_keeps_busy_ones() {
        let mut hosts = HostRegistry::default();
        let mut permits = Vec::new();
        for i in 0..MAX_HOSTS {
            let name = format!("h{i}.example");
            let h = hosts.get_or_add(&name, || host(&name));
            // The two oldest hosts are busy.
            if i < 2 {
                permits.push(h.borrow().slots.try_acquire().expect("a free slot"));
            }
        }
        assert_eq!(hosts.len(), MAX_HOSTS);
        hosts.get_or_add("new.example", || host("new.example"));
        assert_eq!(hosts.len(), MAX_HOSTS, "one forgotten for the one added");
        let names: Vec<String> = hosts.iter().map(|h| h.borrow().name.to_string()).collect();
        assert!(
            names.contains(&"h0.example".into()) && names.contains(&"h1.example".into()),
            "busy hosts stay"
        );
        assert!(!names.contains(&"h2.example".into()), "the oldest idle host is forgotten");
        assert!(names.contains(&"h3.example".into()));
        assert_eq!(names.last().map(String::as_str), Some("new.example"));
    }

    #[test]
    fn a_registry_of_busy_hosts_grows_rather_than_forget_one() {
        let mut hosts = HostRegistry::default();
        let mut permits = Vec::new();
        for i in 0..=MAX_HOSTS {
            let name = format!("h{i}.example");
            let h = hosts.get_or_add(&name, || host(&name));
            permits.push(h.borrow().slots.try_acquire().expect("a free slot"));
        }
        assert_eq!(hosts.len(), MAX_HOSTS + 1);
    }
}
