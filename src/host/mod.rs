//! Host and TCP-stack fingerprint (cfg macos / linux). Not built yet.
