// Package docs holds no code: its tests keep the pages of this folder and
// README.md in order (links and anchors that resolve, a README that stays a
// front page). The facts on the pages are kept true by the tests of the
// packages they describe; docs/configuration.md is generated from
// config.Settings.
package docs
