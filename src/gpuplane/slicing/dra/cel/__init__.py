"""The CEL subset DRA device selectors use (lexer, parser, AST, evaluator), and CEL's semver
extension as Kubernetes registers it for ``device.attributes`` (``k8s.io/dynamic-resource-
allocation/cel``). Evaluation is pure: a compiled expression and one device in, a value out."""
