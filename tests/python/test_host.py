# test_host.py - glowc.Host (python/glowc) over libglowc's host: networks from a path and from
# bytes, sync runs and futures against a Session's outputs, BUSY on a full queue (the host
# paused: no timing), cancel and deadline as exceptions with their statuses, statistics that
# add up, removal, and client threads. Run by CTest like test_glowc.py.
import threading

import numpy as np

import glowc

from checks import check, done, raises


def future_raises(fut, status):
    try:
        fut.result(timeout=600)
    except glowc.Error as e:
        check(e.status == status, "future: status %d, expected %d (%s)" % (e.status, status, e))
        return
    check(False, "the future did not fail (wanted status %d)" % status)


LENET = "models/lenet.onnx"
MLP = "models/digits_mlp.onnx"
rng = np.random.default_rng(7)
images = [rng.random((1, 1, 28, 28), dtype=np.float32) for _ in range(6)]
ref_session = glowc.Session(LENET, backend="cpu", threads=1)
refs = [ref_session.run([x])[0] for x in images]


def close(a, b):
    return a.shape == b.shape and np.allclose(a, b, rtol=0, atol=1e-5)


with glowc.Host("cpu:t1,cpu:t1", queue=4) as h:
    h.add_network("lenet", LENET)
    with open(MLP, "rb") as f:
        h.add_network("mlp", f.read(), replicas=1)
    check(h.network_info("lenet") == {"partitions": 1, "devices": [0, 1]},
          "lenet placement %r" % h.network_info("lenet"))
    check(len(h.network_info("mlp")["devices"]) == 1, "mlp has one replica")
    check(h.inputs("lenet")[0].shape == (1, 1, 28, 28), "lenet input shape")
    check(h.outputs("mlp")[0].shape == (1, 10), "mlp output shape")

    out = h.run("lenet", {"input": images[0]})
    check(close(out[0], refs[0]), "sync run equals the session's")
    check(close(h.run("lenet", [images[1]], as_dict=True)["probs"], refs[1]), "as_dict")
    futs = [h.run_async("lenet", [images[k]]) for k in range(4)]
    for k, fut in enumerate(futs):
        check(close(fut.result(timeout=600)[0], refs[k]), "future %d" % k)

    raises(lambda: h.run("lenet", [np.zeros((1, 28, 28), np.float32)]), "input 0",
           5)  # GLOWC_ERR_BAD_INPUT
    raises(lambda: h.run("nosuch", [images[0]]), "no network 'nosuch'", 1)

    # Paused: four requests fill the queue, the fifth is BUSY at once.
    h.pause(True)
    queued = [h.run_async("lenet", [images[k]]) for k in range(4)]
    raises(lambda: h.run_async("lenet", [images[4]]), "queue is full", glowc.BUSY)
    raises(lambda: h.run("lenet", [images[4]]), "queue is full", glowc.BUSY)
    check(h.cancel(queued[1].request_id), "cancel a queued request")
    future_raises(queued[1], glowc.CANCELLED)
    check(not h.cancel(queued[1].request_id), "cancel twice")
    late = h.run_async("lenet", [images[4]], deadline_us=1000)   # the freed slot
    future_raises(late, glowc.DEADLINE)   # expires while paused
    h.pause(False)
    for k in (0, 2, 3):
        check(close(queued[k].result(timeout=600)[0], refs[k]), "queued %d after resume" % k)

    s = h.stats()
    check(s["rejected"] == 2 and s["cancelled"] == 1 and s["expired"] == 1,
          "stats %r" % s)
    check(s["queued"] + s["running"] + s["done"] + s["failed"] + s["cancelled"] +
          s["expired"] == s["submitted"], "stats add up: %r" % s)
    check(h.stats("lenet")["done"] == s["done"], "all done on lenet")
    check(s["quarantined"] == [], "no device quarantined: %r" % s)
    raises(lambda: h.restore_device(0), "device 0 is not quarantined", 1)

    # Client threads on both networks.
    errors = []

    def client(i):
        for r in range(20):
            k = (i + r) % len(images)
            try:
                got = h.run("lenet", [images[k]])[0]
                if not close(got, refs[k]):
                    errors.append("client %d run %d: wrong output" % (i, r))
                h.run("mlp", [np.full((1, 1, 8, 8), 0.5, np.float32)])
            except glowc.Error as e:
                errors.append(str(e))

    threads = [threading.Thread(target=client, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    check(not errors, "client errors: %r" % errors[:3])

    h.remove_network("mlp")
    raises(lambda: h.run("mlp", [np.zeros((1, 1, 8, 8), np.float32)]), "no network 'mlp'", 1)
    raises(lambda: h.remove_network("mlp"), "no network 'mlp'", 1)

raises(lambda: glowc.Host("gpu"), "unknown backend 'gpu'", 1)
raises(lambda: h.run("lenet", [images[0]]), "closed", 1)

done()
