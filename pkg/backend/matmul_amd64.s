// Empty: lets matmul_amd64.go declare findDotRegistration without a body (go:linkname).
