// Package secret keeps credentials out of what ceiling writes: result.json,
// the reports and the terminal. It redacts the values of sensitive headers
// (Authorization, Cookie, API keys, and those a plan names), the password of
// a URL's user information, and well-known secret query parameters, leaving
// a placeholder that says something was there.
//
// It is pure string work: no I/O, safe for concurrent use.
package secret
