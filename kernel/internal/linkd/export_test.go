package linkd

var Socket = socket
