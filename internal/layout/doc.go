// Package layout has no code: its test holds the import rules between
// xrcbench's packages (docs/design.md, Architecture), so that the layout
// the design describes is the one the code has.
package layout
