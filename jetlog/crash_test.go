package jetlog

const crashChildEnv = "JETLOG_CRASH_CHILD"

func crashChild() {}
