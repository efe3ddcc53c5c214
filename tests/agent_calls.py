"""What an agent back-end sends over REST, for the tests that act as one."""


def change(client, session_id, mode, branch=False, reason="The user agreed."):
    return client.post(
        "/api/tools/agent_change_mode/invoke/",
        {"sessionId": str(session_id), "arguments": {"mode": mode, "branch": branch, "reason": reason}},
        format="json",
    )


def session_in(client, mode):
    response = client.post("/api/sessions/", {"mode": mode}, format="json")
    assert response.status_code == 201, response.content
    return response.json()["id"]
