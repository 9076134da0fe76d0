print("other")
