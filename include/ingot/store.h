/**
 * @file store.h
 * @brief Object stores: datasets in S3-compatible buckets or on HTTP(S) servers.
 *
 * A manifest can live in a bucket (s3://BUCKET/PREFIX/manifest.ingot) or on a web server
 * (https://HOST/PATH/manifest.ingot) beside its shards; every call that takes a manifest path
 * (ingot_manifest_open(), ingot_loader_create(), the tools) takes such a URL too. The loader
 * then reads shards with ranged GETs (one client per loader, its I/O thread, retries and
 * throttling; docs/objectstore.md), with zero LIST or HEAD requests at run time: the manifest
 * records every shard's size and ETag.
 *
 * Endpoint, region and credentials are resolved as the AWS CLI resolves them: AWS_ACCESS_KEY_ID,
 * AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN; AWS_PROFILE with ~/.aws/credentials and
 * ~/.aws/config (or AWS_SHARED_CREDENTIALS_FILE, AWS_CONFIG_FILE); the instance metadata service
 * (IMDSv2; AWS_EC2_METADATA_SERVICE_ENDPOINT); AWS_REGION / AWS_DEFAULT_REGION;
 * AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL (path-style addressing), else AWS (virtual-hosted).
 * http(s):// URLs are read unsigned. No call logs, prints or returns a secret key or token.
 */
#ifndef INGOT_STORE_H
#define INGOT_STORE_H

#include <stdint.h>
#include <ingot/def.h>
#include <ingot/status.h>
#include <ingot/shard.h>

INGOT_BEGIN_DECLS

/* (the calls come in the next commits) */

INGOT_END_DECLS

#endif /* INGOT_STORE_H */
