// Package releasetest proves from outside the checkout that every module of
// the repository installs from a module proxy at a release version, the way
// a merchant's build fetches it: its tests build a file-system module proxy
// from the checkout (or from the tags that .ci/release made in a scratch
// clone), then run the README's Install commands and a program that uses
// every module in a module of their own, with no go.work and no replace.
//
// It is a module of its own so that golang.org/x/mod, which makes the
// module zips, never reaches the go.mod of a program that uses the SDK.
package releasetest
