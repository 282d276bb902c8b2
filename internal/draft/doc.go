// Package draft writes a first plan from what a user already has: curl
// command lines (FromCurl), a browser's HAR recording (FromHAR) or an
// OpenAPI 3.0/3.1 document (FromOpenAPI). `ceiling init` is its command.
//
// A draft is commented YAML that plan.Parse accepts as it is, unless the
// source lacked a value the plan needs: such a value is written as a
// {{TODO "what"}} stub, which validation reports with its place. Secrets
// never reach the plan: the values of credential headers (Authorization,
// Cookie, API keys: secret.Names.Header), of query parameters and body
// fields whose names say they are secrets (secret.Name), and of a URL's
// password become {{env "NAME"}} references, and the Draft lists the
// variables to set. Values a recorded answer handed out (a session cookie,
// a CSRF token, a bearer token from a login's JSON) become extractions.
//
// The formats are read with libraries: mvdan.cc/sh's shell parser for curl
// lines (quotes, $'…', line continuations, $VARIABLES), encoding/json for
// HAR, github.com/getkin/kin-openapi for OpenAPI. Nothing is sent anywhere:
// a draft is built from the source alone, and reads no file but the ones it
// is given (a curl's -d @file, an OpenAPI document's local $refs).
//
// Concurrency: the functions share no state and may run concurrently.
package draft
