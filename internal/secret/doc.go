// Package secret keeps credentials out of what ceiling writes: result.json,
// the reports, JUnit and the terminal. One rule decides what is a secret
// for every output: a name (a header, a query parameter, a flag, a
// variable) that says so by its words (Name: token, secret, signature,
// password, key, auth, session, credential...), credential headers, and
// those a plan names. Their values are redacted in URLs (with a user
// information's password), in argument lists (Args) and inside whole
// commands (Command), leaving a placeholder that says something was there.
//
// It is pure string work (Tail, which reads a log's end, aside): safe for
// concurrent use.
package secret
