package linkd

var Starting = starting

var ReadReply = readReply

// Socket names the server for argv, its import configuration read from its file.
func Socket(argv, env []string) (string, error) { return socket(argv, env, nil) }
