# Platform configuration of plc-line-1 on vm (dev), rendered by fleetform.
export _2fa_mode='totp'
export ALLOWED_ORIGINS='["https://a.example.com","https://b.example.com"]'
export DATABASE='{"host":"db.example.com","options":{"sslmode":"require"},"port":5432}'
export ENABLED='true'
export ENVIRONMENT='dev'
export GREETING='it'\''s $HOME, `id` and "quotes"'
export MULTILINE='first line
second line
'
export QUOTED='[not a list]'
export REPLICAS='3'
export log_level='debug'
