package plan

import (
	"text/template"
	"text/template/parse"
)

// call is a call of a template function: its name and how many arguments it
// gets, a piped value included, and its first argument when that is a
// quoted string written in the call ({{env "API_TOKEN"}}).
type call struct {
	name    string
	args    int
	literal string
	quoted  bool // literal holds the first argument
}

// uses collects what a parsed template reads and calls.
type uses struct {
	refs  [][]string // field chains read from the template's data: [user site]
	calls []call
}

// templateUses returns the field chains a template reads from its data
// (.user.site gives [user site]; $.vu gives [vu]) and the functions it
// calls. Inside range and with, where dot is something else, fields are not
// collected, nor in templates it defines, whose dot is whatever they are
// invoked with; $ always is the data.
func templateUses(t *template.Template) (refs [][]string, calls []call) {
	u := &uses{}
	for _, tt := range t.Templates() {
		if tt.Tree == nil || tt.Tree.Root == nil {
			continue
		}
		main := tt.Name() == t.Name()
		u.node(tt.Tree.Root, main, main)
	}
	return u.refs, u.calls
}

// node walks a node of the tree. dot says whether dot is the template's
// data; dollar whether $ is.
func (u *uses) node(n parse.Node, dot, dollar bool) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return
		}
		for _, item := range n.Nodes {
			u.node(item, dot, dollar)
		}
	case *parse.ActionNode:
		u.pipe(n.Pipe, dot, dollar)
	case *parse.IfNode:
		u.branch(&n.BranchNode, dot, dot, dollar)
	case *parse.RangeNode:
		u.branch(&n.BranchNode, false, dot, dollar)
	case *parse.WithNode:
		u.branch(&n.BranchNode, false, dot, dollar)
	case *parse.TemplateNode:
		u.pipe(n.Pipe, dot, dollar)
	}
}

// branch walks an if, range or with: its pipeline and else branch see the
// outer dot, its body sees bodyDot.
func (u *uses) branch(b *parse.BranchNode, bodyDot, dot, dollar bool) {
	u.pipe(b.Pipe, dot, dollar)
	u.node(b.List, bodyDot, dollar)
	u.node(b.ElseList, dot, dollar)
}

// pipe walks a pipeline; every command after the first also gets the value
// piped into it as its last argument.
func (u *uses) pipe(p *parse.PipeNode, dot, dollar bool) {
	if p == nil {
		return
	}
	for i, cmd := range p.Cmds {
		piped := 0
		if i > 0 {
			piped = 1
		}
		u.command(cmd, piped, dot, dollar)
	}
}

// command walks one command: a function call when it starts with a
// function's name, else an operand with arguments.
func (u *uses) command(cmd *parse.CommandNode, piped int, dot, dollar bool) {
	for i, arg := range cmd.Args {
		if id, ok := arg.(*parse.IdentifierNode); ok && i == 0 {
			c := call{name: id.Ident, args: len(cmd.Args) - 1 + piped}
			if len(cmd.Args) > 1 {
				if s, ok := cmd.Args[1].(*parse.StringNode); ok {
					c.literal, c.quoted = s.Text, true
				}
			}
			u.calls = append(u.calls, c)
			continue
		}
		u.arg(arg, dot, dollar)
	}
}

// arg walks an argument or operand.
func (u *uses) arg(n parse.Node, dot, dollar bool) {
	switch n := n.(type) {
	case *parse.IdentifierNode:
		// A function as an argument is called without arguments.
		u.calls = append(u.calls, call{name: n.Ident})
	case *parse.FieldNode:
		if dot && len(n.Ident) > 0 {
			u.refs = append(u.refs, n.Ident)
		}
	case *parse.VariableNode:
		if dollar && len(n.Ident) > 1 && n.Ident[0] == "$" {
			u.refs = append(u.refs, n.Ident[1:])
		}
	case *parse.ChainNode:
		u.arg(n.Node, dot, dollar)
	case *parse.PipeNode:
		u.pipe(n, dot, dollar)
	}
}
