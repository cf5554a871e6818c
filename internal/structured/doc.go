// Package structured checks the answers of structured requests under load:
// a response_format of json_object or json_schema must be answered with one
// JSON value (of the schema), and a request with tools that must call one
// (tool_choice required, or a named function) with calls to declared
// functions whose arguments are JSON of their parameters' schema. It uses
// the eval suites' JSON Schema code (quality.CompileSchema), within their
// limits.
//
// Where it sits among perfgate's packages, and what it may import:
// docs/architecture.md.
package structured
