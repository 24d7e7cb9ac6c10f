//! The catalogue site: rendered files, the skills section, a real headless browser, and
//! `matrix` results on the agent pages.

mod common;

mod browser;
mod render;
mod skills;
mod verify_site;
