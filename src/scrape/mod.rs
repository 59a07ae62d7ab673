//! The `/metrics` scraper, exposition parser and timeline. Not built yet.
