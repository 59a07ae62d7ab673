//! The engine as the source of `provider_profiles` and `provider_profiles_cooling`: every
//! provider with configured profiles or named by a model fallback (its implicit profile then),
//! with how many of its profiles are cooling or disabled at the scrape — this host's cooldowns
//! and those another fleet host wrote, as the failover decision sees them.

use std::collections::BTreeSet;

use tokio::time::Instant;

use super::Engine;
use crate::engine::metrics::{ProfilesAtScrape, ProviderProfiles};
use crate::engine::transport::Transport;
use crate::wire::dep::provider_of;

impl<T: Transport> ProfilesAtScrape for Engine<T> {
    fn profiles_at(&self, now: Instant) -> Vec<ProviderProfiles> {
        let mut providers: BTreeSet<&str> = self
            .book
            .all()
            .map(|e| e.profile.provider.as_str())
            .collect();
        let failover = &self.config.model_failover;
        for model in failover.fallbacks.iter().chain(&failover.context_fallbacks) {
            providers.insert(provider_of(model));
        }
        let core = self.core();
        providers
            .into_iter()
            .map(|provider| {
                let entries = self.book.for_provider(provider);
                let views = self.views(&core.store, &entries, now);
                ProviderProfiles {
                    provider: provider.to_string(),
                    profiles: views.len(),
                    cooling: views.iter().filter(|v| v.cooling_until.is_some()).count(),
                }
            })
            .collect()
    }
}
