## Nodes
CargoManagement|SYS|CargoManagement.SY.001|Central cargo management system
FleetControl|SYS|FleetControl.SY.002|Vehicle and driver control
OrderSystem|SYS|OrderSystem.SY.003|System for order management
Customer|ACTOR|Customer.AC.001|Customer placing orders
Dispatcher|ACTOR|Dispatcher.AC.002|Plans and assigns transports
Driver|ACTOR|Driver.AC.003|Drives the vehicle
WarehouseClerk|ACTOR|WarehouseClerk.AC.004|Handles goods in the warehouse
Carrier|ACTOR|Carrier.AC.005|External transport partner
ManageFleet|UC|ManageFleet.UC.001|Manage fleet operations
PlaceOrder|UC|PlaceOrder.UC.002|Customer places an order
TrackShipment|UC|TrackShipment.UC.003|Follow a shipment to delivery
PlanDelivery|UC|PlanDelivery.UC.004|Plan delivery tours
ManageWarehouse|UC|ManageWarehouse.UC.005|Keep stock and storage in order
InvoiceCustomer|UC|InvoiceCustomer.UC.006|Bill delivered orders
HandleReturns|UC|HandleReturns.UC.007|Take back returned goods
ScheduleMaintenance|UC|ScheduleMaintenance.UC.008|Keep vehicles serviceable
OptimizeRoutes|FUNC|OptimizeRoutes.FN.001|Computes optimal delivery routes
ParseInput|FUNC|ParseInput.FN.002|Parses user input data
ValidateOrder|FUNC|ValidateOrder.FN.003|Checks an order for completeness
ProcessPayment|FUNC|ProcessPayment.FN.004|Process customer payment
AssignVehicle|FUNC|AssignVehicle.FN.005|Assigns a vehicle to a tour
CalculateETA|FUNC|CalculateETA.FN.006|Estimates arrival times
ReserveStock|FUNC|ReserveStock.FN.007|Reserves goods for an order
PrintLabel|FUNC|PrintLabel.FN.008|Prints shipping labels
NotifyCustomer|FUNC|NotifyCustomer.FN.009|Sends status messages
RecordDelivery|FUNC|RecordDelivery.FN.010|Records proof of delivery
ComputeInvoice|FUNC|ComputeInvoice.FN.011|Computes invoice amounts
ReceiveReturn|FUNC|ReceiveReturn.FN.012|Books returned goods
PlanMaintenance|FUNC|PlanMaintenance.FN.013|Plans service intervals
MonitorVehicle|FUNC|MonitorVehicle.FN.014|Collects vehicle telemetry
ArchiveOrder|FUNC|ArchiveOrder.FN.015|Archives completed orders
RouteOptimality|REQ|RouteOptimality.RQ.001|Routes within 5 % of optimum
InputValidation|REQ|InputValidation.RQ.002|Reject malformed input
OrderCompleteness|REQ|OrderCompleteness.RQ.003|Orders need address and items
PaymentSecurity|REQ|PaymentSecurity.RQ.004|Payments use PCI-DSS compliant providers
FleetAvailability|REQ|FleetAvailability.RQ.005|90 % of vehicles available
ETAAccuracy|REQ|ETAAccuracy.RQ.006|ETA within 15 minutes
StockConsistency|REQ|StockConsistency.RQ.007|No overbooking of stock
LabelFormat|REQ|LabelFormat.RQ.008|Labels follow GS1
NotificationLatency|REQ|NotificationLatency.RQ.009|Notify within one minute
InvoiceCorrectness|REQ|InvoiceCorrectness.RQ.010|Invoices match deliveries
ReturnTraceability|REQ|ReturnTraceability.RQ.011|Every return is traceable

## Edges
CargoManagement -cp-> FleetControl, OrderSystem, ManageFleet, TrackShipment, PlanDelivery, ManageWarehouse
FleetControl -cp-> ScheduleMaintenance
OrderSystem -cp-> PlaceOrder, InvoiceCustomer, HandleReturns
Customer -io-> PlaceOrder, TrackShipment, InvoiceCustomer, HandleReturns
Dispatcher -io-> ManageFleet, PlanDelivery
Driver -io-> TrackShipment, ScheduleMaintenance
WarehouseClerk -io-> ManageWarehouse, HandleReturns
Carrier -io-> PlanDelivery, ScheduleMaintenance
ManageFleet -cp-> AssignVehicle
ManageFleet -st-> FleetAvailability
PlaceOrder -cp-> ParseInput, ValidateOrder, ArchiveOrder
PlaceOrder -st-> OrderCompleteness
TrackShipment -cp-> CalculateETA, NotifyCustomer, RecordDelivery
TrackShipment -st-> ETAAccuracy
PlanDelivery -cp-> OptimizeRoutes
ManageWarehouse -cp-> ReserveStock, PrintLabel
ManageWarehouse -st-> StockConsistency
InvoiceCustomer -cp-> ProcessPayment, ComputeInvoice
InvoiceCustomer -st-> InvoiceCorrectness
HandleReturns -cp-> ReceiveReturn
HandleReturns -st-> ReturnTraceability
ScheduleMaintenance -cp-> PlanMaintenance, MonitorVehicle
OptimizeRoutes -st-> RouteOptimality
ParseInput -st-> InputValidation
ValidateOrder -st-> OrderCompleteness
ProcessPayment -st-> PaymentSecurity
AssignVehicle -st-> FleetAvailability
CalculateETA -st-> ETAAccuracy
ReserveStock -st-> StockConsistency
PrintLabel -st-> LabelFormat
NotifyCustomer -st-> NotificationLatency
RecordDelivery -st-> InvoiceCorrectness
ComputeInvoice -st-> ReturnTraceability
RouteOptimality -dr-> ETAAccuracy
InputValidation -dr-> OrderCompleteness
PaymentSecurity -dr-> InvoiceCorrectness
ETAAccuracy -dr-> NotificationLatency
