// Package schemacheck compiles the JSON Schemas that users write (the values schemas of
// applications, ConfigSchemas and the config schemas of deployment targets) and words
// their violations.
package schemacheck

import (
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

var printer = message.NewPrinter(language.English)

type denyLoader struct{}

func (denyLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("schema references %s: external references are not allowed", url)
}

// Compile compiles doc, a decoded JSON document, as a JSON Schema (draft 2020-12 unless it
// names another) at url. References to anything but the schema itself are refused: a
// schema cannot read files or the network. The errors of adding doc are returned as they
// are; those of compiling it name the schema "the schema", not url (the URL is ours, not
// the user's).
func Compile(url string, doc any) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(denyLoader{})
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	sch, err := c.Compile(url)
	if err != nil {
		return nil, errors.New(strings.ReplaceAll(err.Error(), url, "the schema"))
	}
	return sch, nil
}

// Leaves collects the innermost validation errors of e, in order.
func Leaves(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	return appendLeaves(nil, e)
}

func appendLeaves(out []*jsonschema.ValidationError, e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return append(out, e)
	}
	for _, c := range e.Causes {
		out = appendLeaves(out, c)
	}
	return out
}

// Message says in English what is wrong with the value e is about.
func Message(e *jsonschema.ValidationError) string {
	return e.ErrorKind.LocalizedString(printer)
}

// Rule names the schema keyword that failed by its location in the schema, as in
// properties/port/maximum (references are followed: $defs/port/maximum).
func Rule(e *jsonschema.ValidationError) string {
	kw := strings.Join(e.ErrorKind.KeywordPath(), "/")
	_, frag, _ := strings.Cut(e.SchemaURL, "#")
	if frag = strings.Trim(frag, "/"); frag == "" {
		return kw
	}
	return frag + "/" + kw
}
